"""The `memory-profile` phase: durable facts about the user, shown under `### profile`.

Facts live in memory.sqlite (bi-temporal: a change supersedes, history is kept). Pinned
facts are always shown; contextual ones only when a keyword occurs in the user message.
Switched off (`memoryProfile.enabled = false`), the plugin registers nothing and never
opens the database. Hookimpls only; everything else is imported inside the hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ToolSpec

CONFIG_KEY = "memoryProfile"


def _config(runtime: RuntimeView) -> Any:
    return runtime.config.block(CONFIG_KEY)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .profile_config import ProfileConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=ProfileConfig)]


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    if not _config(runtime).enabled:
        return []
    from .profile_tools import profile_tool_specs

    return profile_tool_specs(runtime)


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    cfg = _config(runtime)
    if not cfg.enabled:
        return []
    from .profile_section import profile_phase

    return [profile_phase(runtime, cfg)]

