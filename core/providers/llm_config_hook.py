"""The hook that registers the `llm` block with the config loader (a core block: it is the
core's provider registry that reads it). Pulled into the core plugin by name."""

from __future__ import annotations

from collections.abc import Iterable

from atomic_agent.hook_markers import hookimpl
from atomic_agent.hook_records import ConfigBlock


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.providers.llm_config import LLM_CONFIG_BLOCK

    return [LLM_CONFIG_BLOCK]
