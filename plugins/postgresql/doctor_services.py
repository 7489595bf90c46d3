"""The plugins' `shared_state` declarations (owner, schema steps, leases) for `doctor`'s
storage checks, built as `storage migrate` builds them: through the plugin host's
command_services, which needs the loaded config (None when config.json does not load: the
core's config check says why, and the storage check covers the core's steps only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def shared_states(state_dir: Path, plugin_host: Any, config: Any) -> list[Any]:
    """Every plugin's shared states, or [] without a plugin host and config; a backend that
    cannot be built leaves them out (the database's own finding says why)."""
    from atomic_agent.api import SessionStoreError

    from .postgresql_contract import SHARED_STATE_SERVICE

    if plugin_host is None or config is None:
        return []
    try:
        provided = plugin_host.command_services(state_dir, config, SHARED_STATE_SERVICE)
    except SessionStoreError:
        return []
    return [state for group in provided for state in group]
