"""Run one interrupted call again after a restart — only if its tool is marked durable.

This is the `run_durable` callable settle_interrupted_calls is given. It runs the tool
exactly as a step would (schema check, the same approval gate through
`ctx.request_approval`, the tool timeout, the same result compression), minus the
loop tracker and events: there is no step to report to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.agent.compress_result import compress_result
from atomic_agent.approval.approval_gate import ApprovalGate
from atomic_agent.config.core_blocks import AgentConfig
from atomic_agent.records.tool_context import ToolContext
from atomic_agent.records.tool_spec import ToolResult
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tools.validate_args import args_errors


async def rerun_durable_call(call: TranscriptEntry, *, registry: ToolRegistry, gate: ApprovalGate, agent: AgentConfig,
                             session: SessionState, state_dir: Path, services: Mapping[str, Any],
                             cancelled: asyncio.Event | None = None) -> ToolResult:
    from atomic_agent.approval.bound_request import bind_request_approval

    tool = call.tool or ""
    spec = registry.get(tool)
    if spec is None or not spec.durable:  # the guard that makes "a non-durable tool never runs twice" local
        return ToolResult.error(f"{tool} is not a durable tool and is never run again after a restart")
    args = dict(call.args or {})
    problems = args_errors(spec.args_schema, args)
    if problems:
        return ToolResult.error(f"invalid args for {tool}: {'; '.join(problems)}.")
    ctx = ToolContext(session_id=session.id, working_dir=session.working_dir, state_dir=state_dir,
                      cancelled=cancelled or asyncio.Event(),
                      request_approval=bind_request_approval(gate, session.id, tool),
                      services={**services, "tool_registry": registry, "session": session})
    timeout = float(agent.tool_timeout_s)
    try:
        result = await asyncio.wait_for(spec.run(args, ctx), timeout)
    except TimeoutError:
        result = ToolResult.error(f"{tool} did not finish within {timeout:g} s and was stopped", timedOut=True)
    except Exception as exc:
        result = ToolResult.error(f"{tool} failed: {type(exc).__name__}: {exc}", exception=type(exc).__name__)
    return compress_result(result, agent.tool_result_summary_chars)
