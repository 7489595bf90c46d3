"""Run one tool call the one way: validate the args, build the context, run under the
timeout, turn any failure into an error result, make the result safe for the prompt.

`invoke_tool` is that path; a step (step_executor's `run_tool_call` adds the step's events), a durable
call run again after a restart (`rerun_durable_call`) and the `tools call` / `mcp call`
commands all go through it.

`compress_result`: the summary is the only part the model sees: capped, control characters
removed, undecodable bytes replaced. Details go to the trace, with long strings clipped so
one 50 MB output cannot bloat the trace either.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.approval.approval_gate import ApprovalGate, CallIdentity, bind_ask_question, bind_request_approval
from atomic_agent.config.app_config import AgentConfig
from atomic_agent.hook_records import Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.prompt.describe_tool import describe_full
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.tools.tool_registry import ToolRegistry, args_errors

DETAIL_STRING_CAP = 8000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(value: object) -> str:
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
    else:
        text = str(value)
    text = text.encode("utf-8", errors="replace").decode("utf-8", errors="replace")  # lone surrogates
    return _CONTROL.sub("", text)


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + f"…[truncated {len(text) - cap} chars]"


def _clip_details(value: Any, depth: int = 0) -> Any:
    if depth > 6:
        return "…"
    if isinstance(value, (str, bytes)):
        return _clip(clean_text(value), DETAIL_STRING_CAP)
    if isinstance(value, Mapping):
        return {str(k): _clip_details(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, (list, tuple)):
        return [_clip_details(v, depth + 1) for v in list(value)[:200]]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return _clip(clean_text(value), DETAIL_STRING_CAP)


def compress_result(result: object, summary_cap: int) -> ToolResult:
    """A well-formed ToolResult from whatever a tool returned (even a non-ToolResult)."""
    if not isinstance(result, ToolResult):
        return ToolResult.error(f"tool returned {type(result).__name__}, not a ToolResult")
    status = result.status if result.status in ("ok", "error", "cancelled") else "error"
    details = _clip_details(dict(result.details)) if result.details else {}
    return ToolResult(status, _clip(clean_text(result.summary), summary_cap), details)


INVALID_ARGS = "invalidArgs"


def tool_context(*, gate: ApprovalGate, registry: ToolRegistry, session: SessionState, state_dir: Path,
                 services: Mapping[str, Any], cancelled: asyncio.Event, tool: str,
                 call: CallIdentity | None = None) -> ToolContext:
    """The context a tool runs with: approvals go through the gate under the session and tool
    (and, with `call`, are recorded against that transcript call, so a restart resumes them)."""
    return ToolContext(session_id=session.id, working_dir=session.working_dir, state_dir=state_dir,
                       cancelled=cancelled, request_approval=bind_request_approval(gate, session.id, tool, call),
                       ask_question=bind_ask_question(gate, session.id, tool, call) if gate.records is not None
                       else None,
                       services={**services, "tool_registry": registry, "session": session})


async def invoke_tool(spec: ToolSpec, args: Mapping[str, Any], ctx: ToolContext, *, timeout_s: float | None,
                      summary_chars: int | None) -> ToolResult:
    """Run one call the one way every caller runs it (a step, a durable re-run after a restart,
    `tools call`, `mcp call`): args checked against the schema, the tool under `timeout_s`
    (None: no limit), a raising tool or one that returns something else turned into an error
    result, never an exception; with `summary_chars` the result is made safe for the prompt."""
    problems = args_errors(spec.args_schema, args)
    if problems:
        hint = f" Schema: {describe_full(spec)}" if spec.tier is Tier.RARE else ""
        result: object = ToolResult.error(f"invalid args for {spec.name}: {'; '.join(problems)}.{hint}",
                                          **{INVALID_ARGS: problems})
    else:
        try:
            # asyncio.timeout, not wait_for: a tool that runs to its end after a stop (a started
            # write) answers with what it did, which wait_for would drop for a CancelledError
            async with asyncio.timeout(timeout_s):
                result = await spec.run(dict(args), ctx)
        except TimeoutError:
            result = ToolResult.error(f"{spec.name} did not finish within {timeout_s:g} s and was stopped",
                                      timedOut=True)
        except Exception as exc:  # a raising tool is an error result, never a failed turn
            result = ToolResult.error(f"{spec.name} failed: {type(exc).__name__}: {exc}",
                                      exception=type(exc).__name__)
    if not isinstance(result, ToolResult):
        return ToolResult.error(f"{spec.name} returned {type(result).__name__}, not a ToolResult")
    return result if summary_chars is None else compress_result(result, summary_chars)


async def rerun_durable_call(call: TranscriptEntry, *, registry: ToolRegistry, gate: ApprovalGate, agent: AgentConfig,
                             session: SessionState, state_dir: Path, services: Mapping[str, Any],
                             cancelled: asyncio.Event | None = None, parked: bool = False) -> ToolResult:
    """Run one interrupted call again after a restart — only if its tool is marked durable,
    or (`parked`) it was waiting on a durable approval record — exactly as a step would
    (schema, approval gate, timeout, compression), minus the loop tracker and the events:
    there is no step to report to. A parked call resumes from the record's answer: the gate
    lets its frozen call through once (an approval is consumed once), never a changed one."""
    tool = call.tool or ""
    spec = registry.get(tool)
    if spec is None or not (spec.durable or (parked and gate.records is not None
                                             and gate.records.parks(_key(session, call)))):
        # the guard that makes "a non-durable tool never runs twice" local
        return ToolResult.error(f"{tool} is not a durable tool and is never run again after a restart")
    context = tool_context(gate=gate, registry=registry, session=session, state_dir=state_dir, services=services,
                           cancelled=cancelled or asyncio.Event(), tool=tool,
                           call=_identity(call))
    return await invoke_tool(spec, dict(call.args or {}), context, timeout_s=float(agent.tool_timeout_s),
                             summary_chars=agent.tool_result_summary_chars)


def _identity(call: TranscriptEntry) -> CallIdentity | None:
    if call.turn_index is None or call.step is None:
        return None
    return CallIdentity(call.turn_index, call.step, call.batch_index or 0, dict(call.args or {}))


def _key(session: SessionState, call: TranscriptEntry) -> str:
    identity = _identity(call)
    return identity.key(session.id) if identity is not None else ""
