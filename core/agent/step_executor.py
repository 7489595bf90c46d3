"""One agent step: infer, check the registry, commit the batch, execute it, commit results.

Durable order per step: after inference and validation, every `assistant_tool_call` row
of the batch is committed before any call runs; each `tool_result` row is committed as
soon as it and every earlier call's result exist (tool_journal), so results land in
batch-index order even when a later call finishes first; then (for a tail terminal)
exactly one `assistant_reply`. The reasoning of the one inference is attached once: to
the first tool call, or to the reply of a pure-terminal step. The prompt pairs each call
with its result when it renders them.
"""

from __future__ import annotations

import asyncio

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.batch_executor import BatchResult, CallOutcome, execute_batch
from atomic_agent.agent.infer_step import infer_step
from atomic_agent.agent.invoke_tool import INVALID_ARGS, run_tool_call
from atomic_agent.agent.loop_detector import LoopVerdict
from atomic_agent.agent.step_context import StepContext
from atomic_agent.agent.tool_calls import ToolCallBatch
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.records.tool_spec import ResourceClass, Tier
from atomic_agent.reliability.failure_taxonomy import ToolExecutionError
from atomic_agent.sessions.tool_journal import ToolJournal
from atomic_agent.sessions.transcript_entry import REPLY, TranscriptEntry
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


def _reply_row(ctx: StepContext, batch: ToolCallBatch, result: BatchResult) -> TranscriptEntry | None:
    if result.terminal is None or result.cancelled:
        return None
    text = _terminal_text(result.terminal.tool, result.terminal.args)
    reasoning = (batch.reasoning or None) if not result.outcomes else None  # already on the first call
    return TranscriptEntry(REPLY, ctx.turn_index, text=text, tool=result.terminal.tool, reasoning=reasoning,
                           step=ctx.step)


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
    journal = ToolJournal(ctx.store, ctx.session, ctx.turn_index, ctx.step)
    tail_terminal = size > 0 and ctx.registry.resource_class(batch.calls[-1].tool) is ResourceClass.TERMINAL
    terminal_at = size - 1 if tail_terminal else size
    # durable before anything runs: a crash from here on leaves a record of what is owed
    journal.commit_calls([(i, c.tool, c.args) for i, c in enumerate(batch.calls[:terminal_at])],
                         batch.reasoning or None)

    def on_outcome(outcome: CallOutcome) -> None:
        journal.commit_result(outcome.index, outcome.call.tool, outcome.result.status, outcome.result.summary,
                              outcome.result.details)

    try:
        result = await execute_batch(batch.calls, ctx.registry, ctx.tracker, run_call, ctx.cancelled, on_loop,
                                     on_outcome=on_outcome)
    except asyncio.CancelledError:
        journal.abandon("cancelled", "cancelled before it finished")
        raise
    except Exception as exc:  # results already in hand are kept; the turn's failure handling adds the note
        journal.abandon("error", f"not finished: the step failed ({type(exc).__name__}: {exc})")
        raise
    _report_unrun(ctx, result, reported, size)
    _trace_invocations(ctx, result, size)
    _apply_effects(ctx, result)
    reply = _reply_row(ctx, batch, result)
    if reply is not None:
        ctx.store.append(ctx.session, [reply], save_state=True)
    else:
        ctx.store.save_state(ctx.session)  # loaded tools may have changed
    cache = {"cache_n": inferred.completion.cache_n, "prompt_n": inferred.completion.prompt_n}
    if result.cancelled:
        return StepOutcome("continue", cancelled=True, **cache)
    if ctx.tracker.breaker_tripped():
        return StepOutcome("continue", loop_signals=result.loop_signals, breaker=True, **cache)
    if result.terminal is not None:
        kind = "finish" if result.terminal.tool == "finish" else "reply"
        return StepOutcome(kind, _terminal_text(result.terminal.tool, result.terminal.args), result.loop_signals, **cache)
    return StepOutcome("continue", loop_signals=result.loop_signals, **cache)
