"""What the fs tools get from the runtime when they are registered.

The runtime's state dir fixes the trust surface (config.json, .env, audit log) and the
trash dir; the runtime itself gives `locate_project` the session store and the configured
project roots. Tools read them through this record instead of reaching for globals.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import ToolContext

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


@attrs.frozen
class FsEnv:
    runtime: RuntimeView | None = None  # a RuntimeView, or None in direct unit tests

    @property
    def state_dir(self) -> Path | None:
        return getattr(self.runtime, "state_dir", None)

    def state_dir_for(self, ctx: ToolContext) -> Path:
        return self.state_dir or Path(ctx.state_dir)

    def extra_trust(self) -> tuple[Path, ...]:
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        return trust_config_paths(self.state_dir)

    def service(self, name: str) -> Any:
        if self.runtime is None:
            return None
        return self.runtime.service(name, None)

    def config_block(self, key: str) -> Any:
        config = getattr(self.runtime, "config", None)
        if config is None:
            return None
        try:
            return config.block(key)
        except KeyError:
            return None
