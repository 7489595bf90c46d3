"""Run one validated call: check args, run (a gated tool asks the gate itself), compress."""

from __future__ import annotations

import asyncio

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.compress_result import compress_result
from atomic_agent.agent.step_context import StepContext
from atomic_agent.agent.tool_call import ToolCall
from atomic_agent.prompt.describe_tool import describe_full
from atomic_agent.records.tool_context import ToolContext
from atomic_agent.records.tool_spec import Tier, ToolResult
from atomic_agent.tools.validate_args import args_errors

INVALID_ARGS = "invalidArgs"


def make_tool_context(ctx: StepContext, tool: str) -> ToolContext:
    from atomic_agent.approval.bound_request import bind_request_approval

    request_approval = bind_request_approval(ctx.gate, ctx.session.id, tool)
    return ToolContext(session_id=ctx.session.id, working_dir=ctx.session.working_dir,
                       state_dir=ctx.services.get("state_dir", ctx.session.working_dir), cancelled=ctx.cancelled,
                       request_approval=request_approval,
                       services={**ctx.services, "tool_registry": ctx.registry, "session": ctx.session})


async def run_tool_call(ctx: StepContext, index: int, call: ToolCall, batch_size: int) -> ToolResult:
    spec = ctx.registry.get(call.tool)
    where = ev.batch_fields(index, batch_size)
    ctx.emit(ev.event(ev.TOOL_CALL_STARTED, turnIndex=ctx.turn_index, step=ctx.step, tool=call.tool,
                      args=call.args, **where))
    if spec is None:  # the registry check ran earlier; this guards replayed batches
        result = ToolResult.error(f"{call.tool!r} is not a registered tool")
    else:
        problems = args_errors(spec.args_schema, call.args)
        if problems:
            hint = f" Schema: {describe_full(spec)}" if spec.tier is Tier.RARE else ""
            result = ToolResult.error(f"invalid args for {call.tool}: {'; '.join(problems)}.{hint}",
                                      **{INVALID_ARGS: problems})
        else:
            timeout = float(ctx.agent.tool_timeout_s)
            try:
                result = await asyncio.wait_for(spec.run(call.args, make_tool_context(ctx, call.tool)), timeout)
            except TimeoutError:
                result = ToolResult.error(f"{call.tool} did not finish within {timeout:g} s and was stopped",
                                          timedOut=True)
            except Exception as exc:  # a raising tool is an error result, never a failed turn
                result = ToolResult.error(f"{call.tool} failed: {type(exc).__name__}: {exc}",
                                          exception=type(exc).__name__)
    result = compress_result(result, ctx.agent.tool_result_summary_chars)
    ctx.emit(ev.event(ev.TOOL_CALL_RESULT, turnIndex=ctx.turn_index, step=ctx.step, tool=call.tool,
                      status=result.status, summary=result.summary, **where))
    return result

