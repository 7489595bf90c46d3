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
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_events import EventSink
from atomic_agent.agent.batch_executor import BatchResult, CallOutcome, execute_batch
from atomic_agent.agent.invoke_tool import INVALID_ARGS, compress_result, invoke_tool, tool_context
from atomic_agent.agent.loop_detector import LoopVerdict, ToolLoopTracker
from atomic_agent.agent.reply_continuation import continue_cut_reply
from atomic_agent.agent.tool_calls import (
    BatchValidationError,
    ToolCall,
    ToolCallBatch,
    ToolCallParseError,
    parse_tool_calls,
    validate_batch,
)
from atomic_agent.approval.approval_gate import ApprovalGate, CallIdentity
from atomic_agent.config.app_config import AgentConfig
from atomic_agent.hook_records import PromptSection, ResourceClass, Tier, ToolResult
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.llm.model_text import has_lone_surrogate, repair_completion, repair_text, repair_value
from atomic_agent.llm.provider_protocol import Completion, CompletionRequest, TextProvider, token_counter
from atomic_agent.llm.reasoning_stream_parser import ReasoningStreamParser
from atomic_agent.prompt.build_prompt import BuiltPrompt, build_prompt, estimate_tokens, fit_to_context
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
from atomic_agent.prompt.conversation_window import ConversationIndex
from atomic_agent.prompt.prompt_style import COACHED
from atomic_agent.reliability.failure_taxonomy import (
    GrammarError,
    ToolExecutionError,
    TurnCancelledError,
    model_error_for,
)
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.tool_journal import ToolJournal
from atomic_agent.sessions.transcript_entry import REPLY, TranscriptEntry
from atomic_agent.storage.group_commit import deferred_sync
from atomic_agent.tools.builtin_tools import LOAD_TOOL_EFFECT
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.trace_events import grammar_hash
from atomic_agent.tracing.trace_recorder import TraceRecorder

# Everything one step needs, passed explicitly (no globals).

@attrs.define
class StepContext:
    provider: TextProvider
    profile: ModelProfile
    registry: ToolRegistry
    gate: ApprovalGate
    session: SessionState
    store: SessionRepository
    tracker: ToolLoopTracker
    trace: TraceRecorder
    emit: EventSink
    agent: AgentConfig
    prompt_env: Any
    stable_prefix: str
    prefix_hash: str
    grammar: str | None
    slot_id: int
    n_ctx: int | None
    n_predict: int
    turn_index: int
    step: int
    cancelled: asyncio.Event
    memory_sections: Sequence[PromptSection] = ()
    notices: Sequence[str] = ()
    services: Mapping[str, Any] = attrs.field(factory=dict)
    temperature: float = 0.2
    seed: int | None = None
    conversations: ConversationIndex | None = None  # the runtime's; None indexes the session afresh
    prompt_style: str = COACHED  # the plan's resolved style; the stable prefix is of the same style
    # [[### header, salted hash], ...] of the framed stable prefix: a replay names the section that drifted
    prefix_sections: Sequence[Sequence[str]] = ()
    today: date | None = None  # the date the tail shows (None: today); a replay pins the recorded one


# One inference: prompt -> completion -> parsed, validated tool calls.
#
# The parser retry is exactly one extra unary completion with the same prompt and slot;
# a model failure (truncated, empty, no stop) is never retried in place, because the
# same prompt would hit the same wall.

@attrs.frozen
class InferredStep:
    batch: ToolCallBatch
    completion: Completion
    attempts: int


def _request(ctx: StepContext, prompt: BuiltPrompt, stream: bool) -> CompletionRequest:
    native = ctx.grammar is None
    return CompletionRequest(prompt=prompt.text, grammar=ctx.grammar, n_predict=ctx.n_predict, slot_id=ctx.slot_id,
                             cache_prompt=True, temperature=ctx.temperature, seed=ctx.seed, stream=stream,
                             prefix_length=len(prompt.framed_prefix),
                             tools=tuple(ctx.registry.specs()) if native else (),
                             parts=(prompt.stable_prefix, prompt.tail), style=ctx.prompt_style,
                             render_parts=lambda style: _parts_in_style(ctx, style))


def _parts_in_style(ctx: StepContext, style: str) -> tuple[str, str]:
    """This step's (stable prefix, tail) in another prompt style: for a fallback link whose
    model wants it (a cloud primary's full prompt would confuse a small local model)."""
    prefix = build_stable_prefix(ctx.prompt_env, ctx.registry, default_capabilities(ctx.session.working_dir),
                                 max_calls=ctx.agent.max_parallel_tool_calls, style=style)
    built = build_prompt(env=ctx.prompt_env, stable_prefix=prefix, profile=ctx.profile, registry=ctx.registry,
                         session=ctx.session, agent=ctx.agent, memory_sections=ctx.memory_sections,
                         notices=ctx.notices, n_ctx=ctx.n_ctx, n_predict=ctx.n_predict,
                         conversations=ctx.conversations, style=style)
    return built.stable_prefix, built.tail


def batch_from_native_calls(completion: Completion) -> ToolCallBatch:
    """Native tool calls map onto the same batch shape the grammar path parses.

    A completion with no calls but with text is read as a reply (the guarded recovery for
    providers that answered in prose); with neither it is a parse failure.
    """
    calls = tuple(ToolCall(name, dict(args)) for name, args in completion.tool_calls or ())
    if not calls:
        text = completion.content.strip()
        if not text:
            raise ToolCallParseError.for_text("the provider returned neither tool calls nor text", completion.content)
        calls = (ToolCall("reply", {"text": text}),)
    return ToolCallBatch("batch", calls, completion.reasoning_content)


async def _complete(ctx: StepContext, request: CompletionRequest,
                    on_delta: Callable[[str], None] | None) -> Completion:
    """One provider call that a stop (the turn's cancel event) ends at once: a user stop or a
    graceful stop's hard park must not wait out an inference that may run for minutes."""
    sink = on_delta

    def repaired(text: str) -> None:  # a streamed piece is model text too: repaired before any host sees it
        if sink is not None:
            sink(repair_text(text))

    call = asyncio.ensure_future(ctx.provider.complete(request, repaired if sink is not None else None))
    stop = asyncio.ensure_future(ctx.cancelled.wait())
    try:
        await asyncio.wait({call, stop}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stop.cancel()
        if not call.done():
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
    if call.cancelled():
        raise TurnCancelledError("turn cancelled during inference")
    return repair_completion(call.result())


def _record_completion(ctx: StepContext, completion: Completion, attempt: int, reasoning: str,
                       continuation: int = 0) -> None:
    # stop/truncated decide a model failure and toolCalls carry a native answer: a replay needs them
    native = {} if completion.tool_calls is None else {"toolCalls": [[n, a] for n, a in completion.tool_calls]}
    extra = {"continuation": continuation} if continuation else {}  # a piece of a reply the token limit cut
    ctx.trace.record("llm_completion", turnIndex=ctx.turn_index, step=ctx.step, attempt=attempt, **extra,
                     content=completion.content, reasoningContent=completion.reasoning_content or reasoning,
                     durationMs=round(completion.duration_ms, 1), stopType=completion.stop_type,
                     stop=completion.stop, truncated=completion.truncated,
                     tokensPredicted=completion.tokens_predicted, tokensEvaluated=completion.tokens_evaluated,
                     cacheN=completion.cache_n, promptN=completion.prompt_n, slotId=completion.slot_id, **native)


def _repaired(batch: ToolCallBatch) -> ToolCallBatch:
    """A JSON escape such as `\\ud800` in the model's answer decodes to a lone surrogate only
    when it is parsed: the parsed calls are model text too, repaired like the raw text."""
    if not any(has_lone_surrogate(call.tool) or has_lone_surrogate(call.args) for call in batch.calls) \
            and not has_lone_surrogate(batch.reasoning):
        return batch
    calls = tuple(ToolCall(repair_text(call.tool), repair_value(call.args)) for call in batch.calls)
    return attrs.evolve(batch, calls=calls, reasoning=repair_text(batch.reasoning))


def _parse(ctx: StepContext, completion: Completion) -> ToolCallBatch:
    if completion.tool_calls is not None:
        batch = batch_from_native_calls(completion)
    else:
        prefilled = bool(ctx.profile.prefill) and ctx.profile.has_reasoning
        batch = _repaired(parse_tool_calls(completion.content, ctx.profile, prefilled_open=prefilled))
    try:
        validate_batch(batch.calls, ctx.registry, ctx.agent.max_parallel_tool_calls)
    except BatchValidationError as exc:
        exc.raw_preview = completion.content[:400]
        raise
    return batch


async def infer_step(ctx: StepContext, prompt: BuiltPrompt) -> InferredStep:
    ctx.trace.record("prompt_captured", turnIndex=ctx.turn_index, step=ctx.step, stablePrefixHash=ctx.prefix_hash,
                     tail=prompt.tail, slotId=ctx.slot_id, profile=ctx.profile.name,
                     framing=ctx.profile.framing.name, promptStyle=ctx.prompt_style,
                     prefixSections=[list(pair) for pair in ctx.prefix_sections], grammarHash=grammar_hash(ctx.grammar),
                     promptDate=(ctx.today or date.today()).isoformat(), nCtx=ctx.n_ctx, nPredict=ctx.n_predict,
                     tokens={"stablePrefix": estimate_tokens(prompt.framed_prefix), "tail": estimate_tokens(prompt.tail),
                             "total": estimate_tokens(prompt.text), "estimated": True})
    ctx.profile.check_prompt_aligned(prompt.text)  # a misframed prompt would waste the whole step
    parser = ReasoningStreamParser(ctx.profile, pre_opened=bool(ctx.profile.prefill) and ctx.profile.has_reasoning)

    def on_delta(text: str) -> None:
        for kind, piece in parser.feed(text):
            if piece:
                ctx.emit(ev.event(ev.REASONING_DELTA if kind == "reasoning" else ev.TEXT_DELTA,
                                  turnIndex=ctx.turn_index, step=ctx.step, delta=piece))

    started = time.perf_counter()
    request = _request(ctx, prompt, stream=True)
    opening = await _complete(ctx, request, on_delta)
    opening = attrs.evolve(opening, duration_ms=opening.duration_ms or (time.perf_counter() - started) * 1000)
    # a long reply cut by the token limit is continued in place (reply_continuation); the trace keeps
    # each completion as the model gave it, so a rerun answers the same requests in the same order
    pieces: list[tuple[Completion, int]] = []
    completion = await continue_cut_reply(lambda req, sink: _complete(ctx, req, sink), request, prompt, opening,
                                          on_delta, ctx.n_ctx, estimate_tokens,
                                          lambda piece, n: pieces.append((piece, n)))
    parser.finish()
    _record_completion(ctx, opening, 1, parser.reasoning)
    for piece, n in pieces:
        _record_completion(ctx, piece, 1, "", continuation=n)
    failure = model_error_for(completion) if completion.tool_calls is None else None
    if failure is not None:
        raise failure
    try:
        return InferredStep(_parse(ctx, completion), completion, 1)
    except (ToolCallParseError, BatchValidationError) as first:
        ctx.emit(ev.event(ev.PARSE_RETRY, turnIndex=ctx.turn_index, step=ctx.step, reason=str(first)))
        ctx.trace.record("parse_retry", turnIndex=ctx.turn_index, step=ctx.step, reason=str(first))
        # the retry is unary so partial stream deltas are never emitted twice
        retry = await _complete(ctx, _request(ctx, prompt, stream=False), None)
        _record_completion(ctx, retry, 2, "")
        failure = model_error_for(retry) if retry.tool_calls is None else None
        if failure is not None:
            raise failure from first
        try:
            return InferredStep(_parse(ctx, retry), retry, 2)
        except (ToolCallParseError, BatchValidationError) as second:
            raise GrammarError(f"the model's answer did not parse twice: {first}; then: {second}",
                               raw_preview=getattr(first, "raw_preview", "")) from second


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


def _terminal_text(tool: str, args: Mapping[str, Any]) -> str:
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


async def run_tool_call(ctx: StepContext, index: int, call: ToolCall, batch_size: int) -> ToolResult:
    """One call of a step: its started/result events around `invoke_tool`."""
    spec = ctx.registry.get(call.tool)
    where = ev.batch_fields(index, batch_size)
    ctx.emit(ev.event(ev.TOOL_CALL_STARTED, turnIndex=ctx.turn_index, step=ctx.step, tool=call.tool,
                      args=call.args, **where))
    if spec is None:  # checked before the batch ran; a live tool (MCP) may be withdrawn since
        result = compress_result(ToolResult.error(f"{call.tool!r} is no longer a registered tool (its plugin or "
                                                  "MCP server withdrew it after the call was checked); use a "
                                                  "tool from the current list"),
                                 ctx.agent.tool_result_summary_chars)
    else:
        state_dir = ctx.services.get("state_dir", ctx.session.working_dir)
        context = tool_context(gate=ctx.gate, registry=ctx.registry, session=ctx.session, state_dir=state_dir,
                               services=ctx.services, cancelled=ctx.cancelled, tool=call.tool,
                               call=CallIdentity(ctx.turn_index, ctx.step, index, dict(call.args)))
        result = await invoke_tool(spec, call.args, context, timeout_s=float(ctx.agent.tool_timeout_s),
                                   summary_chars=ctx.agent.tool_result_summary_chars)
    ctx.emit(ev.event(ev.TOOL_CALL_RESULT, turnIndex=ctx.turn_index, step=ctx.step, tool=call.tool,
                      status=result.status, summary=result.summary, **where))
    return result


def all_rerunnable(calls: Sequence[ToolCall], registry: ToolRegistry) -> bool:
    """Whether every call may run twice (each tool `durable`: a read, or idempotent), so its batch
    needs no fsync before it runs. If a power cut takes the batch's record, the turn resumes from
    the last commit on disk and these calls may run again, which their tools allow; a call
    without that promise runs only once its record is on disk. (A lone terminal call, the reply,
    runs nothing: the empty batch is rerunnable.)"""
    return all((spec := registry.get(call.tool)) is not None and spec.durable for call in calls)


async def execute_step(ctx: StepContext) -> StepOutcome:
    if ctx.today is None:  # one date for the prompt and its trace line, even across midnight
        ctx = attrs.evolve(ctx, today=date.today())

    def build(count: Callable[[str], int]) -> BuiltPrompt:
        return build_prompt(env=ctx.prompt_env, stable_prefix=ctx.stable_prefix, profile=ctx.profile,
                            registry=ctx.registry, session=ctx.session, agent=ctx.agent,
                            memory_sections=ctx.memory_sections, notices=ctx.notices, n_ctx=ctx.n_ctx,
                            n_predict=ctx.n_predict, conversations=ctx.conversations, style=ctx.prompt_style,
                            today=ctx.today, count=count)

    counter = token_counter(ctx.provider)
    prompt = await fit_to_context(build, counter.count_tokens if counter is not None else None,
                                  ctx.n_ctx, ctx.n_predict)
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

    async def run_call(index: int, call: ToolCall) -> ToolResult:
        result = await run_tool_call(ctx, index, call, size)
        reported.add(index)  # run_tool_call emitted its result event
        return result

    composite = ctx.tracker.observe_batch([(c.tool, c.args) for c in batch.calls])
    if composite.level != "none":
        on_loop(composite)
    journal = ToolJournal(ctx.store, ctx.session, ctx.turn_index, ctx.step)
    tail_terminal = size > 0 and ctx.registry.resource_class(batch.calls[-1].tool) is ResourceClass.TERMINAL
    terminal_at = size - 1 if tail_terminal else size
    # committed before anything runs: a crash from here on leaves a record of what is owed (committed
    # at once; the fsync that makes it durable is shared with every turn committing meanwhile)
    with deferred_sync():
        journal.commit_calls([(i, c.tool, c.args) for i, c in enumerate(batch.calls[:terminal_at])],
                             batch.reasoning or None)
    if not all_rerunnable(batch.calls[:terminal_at], ctx.registry):
        await ctx.store.wait_durable()  # on disk before a call whose effect must not happen twice runs

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
        # not fsynced: the reply is acknowledged by the finalize's durable commit, which follows
        ctx.store.append(ctx.session, [reply], save_state=True, durable=False)
    else:
        with deferred_sync():  # loaded tools may have changed; acknowledged by the next durable commit
            ctx.store.save_state(ctx.session)
    completion = inferred.completion
    cache = StepOutcome("continue", cache_n=completion.cache_n, prompt_n=completion.prompt_n)
    # what the step cost the server: a host shows the slot, the cache reuse and the prompt's size
    ctx.emit(ev.event(ev.STEP_FINISHED, sessionId=ctx.session.id, turnIndex=ctx.turn_index, step=ctx.step,
                      slotId=completion.slot_id, cacheN=completion.cache_n, promptN=completion.prompt_n,
                      tokensPredicted=completion.tokens_predicted))
    if result.cancelled:
        return attrs.evolve(cache, cancelled=True)
    if ctx.tracker.breaker_tripped():
        return attrs.evolve(cache, loop_signals=result.loop_signals, breaker=True)
    if result.terminal is not None:
        kind = "finish" if result.terminal.tool == "finish" else "reply"
        return attrs.evolve(cache, kind=kind, reply_text=_terminal_text(result.terminal.tool, result.terminal.args),
                            loop_signals=result.loop_signals)
    return attrs.evolve(cache, loop_signals=result.loop_signals)
