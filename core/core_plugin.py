"""The core's own hook implementations, registered before any entry-point plugin.

They are essential: `ATOMIC_AGENT_PLUGINS` and `plugins.disabled` cannot switch them off.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.hookspecs import hookimpl

if TYPE_CHECKING:  # annotations only: `--help` loads this plugin without the record classes
    from atomic_agent.hook_records import ApprovalCategory, ConfigBlock, ToolSpec


# The hook that registers the `llm` block with the config loader (a core block: it is the
# core's provider registry that reads it). Pulled into the core plugin by name.

@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.providers.llm_config import LLM_CONFIG_BLOCK

    return [LLM_CONFIG_BLOCK]


@hookimpl
def register_approval_categories() -> Iterable[ApprovalCategory]:
    from atomic_agent.approval.approval_gate import STANDARD_CATEGORIES

    return STANDARD_CATEGORIES


@hookimpl
def register_tools(runtime: object) -> Iterable[ToolSpec]:
    from atomic_agent.tools.builtin_tools import builtin_tool_specs

    return builtin_tool_specs()


@hookimpl
def report_status(state_dir: Path) -> Iterable[dict[str, Any]]:
    from atomic_agent.turns.turn_overview import turn_status

    return turn_status(state_dir)
