"""One agent step: infer, check the registry, execute the batch, append the transcript.

Transcript shape per step: N assistant_tool_call / tool_result pairs in batch-index
order, then (for a tail terminal) exactly one assistant_reply. The reasoning of the one
inference is attached once: to the first tool call, or to the reply of a pure-terminal step.
"""

from __future__ import annotations

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.batch_executor import BatchResult, execute_batch
from atomic_agent.agent.infer_step import infer_step
from atomic_agent.agent.loop_verdict import LoopVerdict
from atomic_agent.agent.run_tool_call import INVALID_ARGS, run_tool_call
from atomic_agent.agent.step_context import StepContext
from atomic_agent.agent.tool_call import ToolCallBatch
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.records.tool_spec import Tier
from atomic_agent.reliability.failure_taxonomy import ToolExecutionError
from atomic_agent.sessions.transcript_entry import REPLY, TOOL_CALL, TOOL_RESULT, TranscriptEntry
from atomic_agent.tools.builtin_tools import LOAD_TOOL_EFFECT


@attrs.frozen
class StepOutcome:
    kind: str  # "continue" | "reply" | "finish"
    reply_text: str = ""
    loop_signals: tuple[LoopVerdict, ...] = ()
    breaker: bool = False
    cancelled: bool = False
    cache_n: int = 0
    prompt_n: int = 0


def _check_registry(ctx: StepContext, batch: ToolCallBatch) -> None:
    missing = [c.tool for c in batch.calls if c.tool not in ctx.registry]
    if missing:
        raise ToolExecutionError(f"the model called unregistered tool(s) {', '.join(missing)}", tool=missing[0])


def _transcript(ctx: StepContext, batch: ToolCallBatch, result: BatchResult) -> list[TranscriptEntry]:
    rows: list[TranscriptEntry] = []
    reasoning = batch.reasoning or None
    for outcome in result.outcomes:
        rows.append(TranscriptEntry(TOOL_CALL, ctx.turn_index, tool=outcome.call.tool, args=outcome.call.args,
                                    reasoning=reasoning, step=ctx.step, batch_index=outcome.index))
        reasoning = None
        rows.append(TranscriptEntry(TOOL_RESULT, ctx.turn_index, text=outcome.result.summary, tool=outcome.call.tool,
                                    status=outcome.result.status, details=dict(outcome.result.details),
                                    step=ctx.step, batch_index=outcome.index))
    if result.terminal is not None and not result.cancelled:
        text = _terminal_text(result.terminal.tool, result.terminal.args)
        rows.append(TranscriptEntry(REPLY, ctx.turn_index, text=text, tool=result.terminal.tool,
                                    reasoning=reasoning, step=ctx.step))
    return rows


def _terminal_text(tool: str, args: dict) -> str:
    value = args.get("text") if tool == "reply" else args.get("summary")
    return value if isinstance(value, str) else str(value or "")


def _apply_effects(ctx: StepContext, result: BatchResult) -> None:
    for outcome in result.outcomes:  # batch-index order: last writer wins
        name = outcome.result.details.get(LOAD_TOOL_EFFECT)
        if isinstance(name, str):
            ctx.session.load_tool(name, ctx.agent.loaded_tools_cap)
        spec = ctx.registry.get(outcome.call.tool)
        if (ctx.agent.auto_expand_rare_on_error and spec is not None and spec.tier is Tier.RARE
                and outcome.result.details.get(INVALID_ARGS)):
            ctx.session.load_tool(spec.name, ctx.agent.loaded_tools_cap)


def _report_unrun(ctx: StepContext, result: BatchResult, reported: set[int], size: int) -> None:
    """Vetoed and cancelled-before-start calls still get a result event, so hosts see every slot."""
    for outcome in result.outcomes:
        if outcome.index not in reported:
            ctx.emit(ev.event(ev.TOOL_CALL_RESULT, turnIndex=ctx.turn_index, step=ctx.step, tool=outcome.call.tool,
                              status=outcome.result.status, summary=outcome.result.summary, vetoed=outcome.vetoed,
                              **ev.batch_fields(outcome.index, size)))


def _trace_invocations(ctx: StepContext, result: BatchResult, size: int) -> None:
    for outcome in result.outcomes:
        where = ev.batch_fields(outcome.index, size)
        ctx.trace.record("tool_invocation", turnIndex=ctx.turn_index, step=ctx.step, tool=outcome.call.tool,
                         args=outcome.call.args, status=outcome.result.status, summary=outcome.result.summary,
                         details=dict(outcome.result.details), durationMs=round(outcome.duration_ms, 1), **where)


async def execute_step(ctx: StepContext) -> StepOutcome:
    prompt = build_prompt(env=ctx.prompt_env, stable_prefix=ctx.stable_prefix, profile=ctx.profile,
                          registry=ctx.registry, session=ctx.session, agent=ctx.agent,
                          memory_sections=ctx.memory_sections, notices=ctx.notices, n_ctx=ctx.n_ctx,
                          n_predict=ctx.n_predict)
    inferred = await infer_step(ctx, prompt)
    batch = inferred.batch
    _check_registry(ctx, batch)
    size = len(batch.calls)

    def on_loop(verdict: LoopVerdict) -> None:
        ctx.trace.record("loop_detected", turnIndex=ctx.turn_index, step=ctx.step, level=verdict.trace_level,
                         detector=verdict.detector, tool=verdict.tool)
        ctx.emit(ev.event(ev.LOOP_DETECTED, turnIndex=ctx.turn_index, step=ctx.step, level=verdict.trace_level,
                          detector=verdict.detector, tool=verdict.tool))

    reported: set[int] = set()

    async def run_call(index: int, call):  # type: ignore[no-untyped-def]
        result = await run_tool_call(ctx, index, call, size)
        reported.add(index)  # run_tool_call emitted its result event
        return result

    composite = ctx.tracker.observe_batch([(c.tool, c.args) for c in batch.calls])
    if composite.level != "none":
        on_loop(composite)
    result = await execute_batch(batch.calls, ctx.registry, ctx.tracker, run_call, ctx.cancelled,
                                 ctx.agent.batch_tool_result_char_cap, on_loop)
    _report_unrun(ctx, result, reported, size)
    _trace_invocations(ctx, result, size)
    _apply_effects(ctx, result)
    ctx.store.append(ctx.session, _transcript(ctx, batch, result), save_state=True)  # one commit per step
    cache = {"cache_n": inferred.completion.cache_n, "prompt_n": inferred.completion.prompt_n}
    if result.cancelled:
        return StepOutcome("continue", cancelled=True, **cache)
    if ctx.tracker.breaker_tripped():
        return StepOutcome("continue", loop_signals=result.loop_signals, breaker=True, **cache)
    if result.terminal is not None:
        kind = "finish" if result.terminal.tool == "finish" else "reply"
        return StepOutcome(kind, _terminal_text(result.terminal.tool, result.terminal.args), result.loop_signals, **cache)
    return StepOutcome("continue", loop_signals=result.loop_signals, **cache)
