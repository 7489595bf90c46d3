"""The synthetic result that replaces a call the loop gate refused to run."""

from __future__ import annotations

from atomic_agent.agent.loop_notices import format_veto_instruction
from atomic_agent.records.tool_spec import ToolResult

LOOP_DENIED_REASON = "tool-loop"


def veto_result(tool: str) -> ToolResult:
    """The error result the model sees instead of running `tool` (it never runs)."""
    return ToolResult("error", format_veto_instruction(tool), {"deniedReason": LOOP_DENIED_REASON})


def is_loop_veto(result: ToolResult) -> bool:
    """True for a result produced by `veto_result` (or anything shaped like it)."""
    return result.status == "error" and result.details.get("deniedReason") == LOOP_DENIED_REASON
