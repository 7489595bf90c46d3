"""The core's own hook implementations, registered before any entry-point plugin.

They are essential: `ATOMIC_AGENT_PLUGINS` and `plugins.disabled` cannot switch them off.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.hookspecs import hookimpl

if TYPE_CHECKING:  # annotations only: `--help` loads this plugin without the record classes
    from pathlib import Path

    from atomic_agent.hook_records import ApprovalCategory, ConfigBlock, DoctorFinding, ToolSpec


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
def report_doctor_findings(state_dir: Path, plugin_host: Any) -> Iterable[DoctorFinding]:
    """What only the core knows about a state dir: the sessions schema, retired plugin names,
    prompt overrides that override nothing."""
    from atomic_agent.config.retired_plugins import retired_name_findings
    from atomic_agent.hook_records import DoctorFinding
    from atomic_agent.prompt.prompt_assets import unused_overrides
    from atomic_agent.sessions.session_file_findings import sessions_file_findings

    overrides = [DoctorFinding("prompt.overrides", "warn", f"{path.name} is never loaded", advice, str(path))
                 for path, advice in unused_overrides(state_dir, plugin_host)]
    return [*sessions_file_findings(state_dir), *retired_name_findings(state_dir), *overrides]


@hookimpl
def report_status(state_dir: Path, config: Any, plugin_host: Any) -> Iterable[dict[str, Any]]:
    from atomic_agent.turns.turn_overview import turn_status

    return [*turn_status(state_dir, config, plugin_host), *_approvals_status(state_dir, config, plugin_host)]


def _approvals_status(state_dir: Path, config: Any, plugin_host: Any) -> list[dict[str, Any]]:
    """The approvals line from the backend the runtime would use (storage.url: the fleet's database)."""
    from atomic_agent.approval.approval_records import approvals_status, approvals_unreadable
    from atomic_agent.sessions.store_errors import SessionStoreError
    from atomic_agent.turns.configured_backend import configured_backend
    from atomic_agent.turns.session_backends import DEFAULT_BACKEND

    try:
        backend = configured_backend(state_dir, config, plugin_host)
    except SessionStoreError as exc:
        return [approvals_unreadable("the approval records", exc)]
    if backend is DEFAULT_BACKEND:
        return approvals_status(state_dir)
    return approvals_status(state_dir, lambda: backend.approvals(state_dir), f"the {backend.name} approval records")
