"""One inference: prompt -> completion -> parsed, validated tool calls.

The parser retry is exactly one extra unary completion with the same prompt and slot;
a model failure (truncated, empty, no stop) is never retried in place, because the
same prompt would hit the same wall.
"""

from __future__ import annotations

import asyncio
import time

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.tool_calls import parse_tool_calls
from atomic_agent.agent.step_context import StepContext
from atomic_agent.agent.tool_calls import ToolCall, ToolCallBatch, ToolCallParseError
from atomic_agent.agent.tool_calls import BatchValidationError, validate_batch
from atomic_agent.llm.completion import Completion, CompletionRequest
from atomic_agent.llm.reasoning_stream_parser import ReasoningStreamParser
from atomic_agent.prompt.build_prompt import BuiltPrompt
from atomic_agent.prompt.estimate_tokens import estimate_tokens
from atomic_agent.reliability.detect_model_failure import model_error_for
from atomic_agent.reliability.failure_taxonomy import GrammarError, TurnCancelledError


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
                             tools=tuple(ctx.registry.specs()) if native else ())


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


async def _complete(ctx: StepContext, request: CompletionRequest, on_delta: object) -> Completion:
    """One provider call that a stop (the turn's cancel event) ends at once: a user stop or a
    graceful stop's hard park must not wait out an inference that may run for minutes."""
    call = asyncio.ensure_future(ctx.provider.complete(request, on_delta))
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
    return call.result()


def _record_completion(ctx: StepContext, completion: Completion, attempt: int, reasoning: str) -> None:
    ctx.trace.record("llm_completion", turnIndex=ctx.turn_index, step=ctx.step, attempt=attempt,
                     content=completion.content, reasoningContent=completion.reasoning_content or reasoning,
                     durationMs=round(completion.duration_ms, 1), stopType=completion.stop_type,
                     tokensPredicted=completion.tokens_predicted, tokensEvaluated=completion.tokens_evaluated,
                     cacheN=completion.cache_n, promptN=completion.prompt_n, slotId=completion.slot_id)


def _parse(ctx: StepContext, completion: Completion) -> ToolCallBatch:
    if completion.tool_calls is not None:
        batch = batch_from_native_calls(completion)
    else:
        prefilled = bool(ctx.profile.prefill) and ctx.profile.has_reasoning
        batch = parse_tool_calls(completion.content, ctx.profile, prefilled_open=prefilled)
    try:
        validate_batch(batch.calls, ctx.registry, ctx.agent.max_parallel_tool_calls)
    except BatchValidationError as exc:
        exc.raw_preview = completion.content[:400]
        raise
    return batch


async def infer_step(ctx: StepContext, prompt: BuiltPrompt) -> InferredStep:
    ctx.trace.record("prompt_captured", turnIndex=ctx.turn_index, step=ctx.step, stablePrefixHash=ctx.prefix_hash,
                     tail=prompt.tail, slotId=ctx.slot_id, profile=ctx.profile.name,
                     framing=ctx.profile.framing.name,
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
    completion = await _complete(ctx, _request(ctx, prompt, stream=True), on_delta)
    parser.finish()
    completion = attrs.evolve(completion, duration_ms=completion.duration_ms or (time.perf_counter() - started) * 1000)
    _record_completion(ctx, completion, 1, parser.reasoning)
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
