"""Run one tool exactly as the agent loop would: schema validation, then the tool with a
context whose approvals go through the runtime's gate (the shell guard lives in the tool,
so it runs too). Failures of the tool become error results, as in a batch."""

from __future__ import annotations

import asyncio
import difflib
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import ResourceClass, ToolContext, ToolResult, approval_gate, args_errors, invoke_tool

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


class CallRefused(ValueError):
    """The call cannot start (unknown tool, bad args); the message says what to fix."""


@attrs.frozen
class CallOutcome:
    tool: str
    session_id: str
    working_dir: Path
    result: ToolResult


def transient_session_id() -> str:
    return f"tools-call-{secrets.token_hex(4)}"


def check_call(runtime: RuntimeView, name: str, args: Mapping[str, Any]) -> Any:
    spec = runtime.registry.get(name)
    if spec is None:
        close = difflib.get_close_matches(name, runtime.registry.names(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `atomic-agent tools list` shows them"
        raise CallRefused(f"no tool named {name!r}{hint}")
    if spec.resource_class is ResourceClass.TERMINAL:
        raise CallRefused(f"{name} ends a turn; it only makes sense inside `atomic-agent run`")
    problems = args_errors(spec.args_schema, args, limit=10)
    if problems:
        raise CallRefused(f"invalid args for {name}: {'; '.join(problems)}")
    return spec


async def call_one_tool(runtime: RuntimeView, name: str, args: Mapping[str, Any], *, session_id: str, working_dir: Path,
                        cancelled: asyncio.Event | None = None) -> CallOutcome:
    spec = check_call(runtime, name, args)
    ctx = ToolContext(session_id=session_id, working_dir=working_dir, state_dir=runtime.state_dir,
                      cancelled=cancelled or asyncio.Event(),
                      request_approval=approval_gate.bind_request_approval(runtime.gate, session_id, name),
                      services={"state_dir": runtime.state_dir, "approval_gate": runtime.gate,
                                "tool_registry": runtime.registry})
    # no time limit and the whole summary: the user asked for this one call and reads its answer
    result = await invoke_tool(spec, args, ctx, timeout_s=None, summary_chars=None)
    return CallOutcome(name, session_id, working_dir, result)
