"""The loaded configuration: every block structured, unknown blocks kept verbatim."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.core_blocks import AgentConfig, PluginsConfig, TracingConfig
from atomic_agent.config.dotenv_file import DotenvLoadResult


@attrs.frozen
class AppConfig:
    """A frozen snapshot of config.json (plus env overrides) taken at bootstrap."""

    state_dir: Path
    path: Path
    version: int
    blocks: Mapping[str, Any]
    unknown_blocks: Mapping[str, Any] = attrs.field(factory=dict)
    dotenv: DotenvLoadResult | None = None

    def block(self, key: str) -> Any:
        """The structured block `key`; a KeyError names the blocks that exist."""
        try:
            return self.blocks[key]
        except KeyError:
            raise KeyError(f"no config block {key!r}; known blocks: {', '.join(sorted(self.blocks))}") from None

    @property
    def agent(self) -> AgentConfig:
        return self.blocks["agent"]

    @property
    def plugins(self) -> PluginsConfig:
        return self.blocks["plugins"]

    @property
    def tracing(self) -> TracingConfig:
        return self.blocks["tracing"]

    def with_block(self, key: str, value: Any) -> AppConfig:
        return attrs.evolve(self, blocks={**self.blocks, key: value})
