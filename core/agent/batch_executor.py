"""Run one step's tool calls by resource class; results come back in batch-index order.

Phase 1 (synchronous gate): every non-terminal call, in index order, is checked and
recorded by the turn's loop tracker before anything runs, so a duplicate later in the
same batch sees its earlier sibling; a vetoed call never runs. Phase 2: pure reads fan
out, every other class runs serially within its group, groups run concurrently. A
failing call becomes an error result and never aborts its siblings. A terminal call
(reply/finish) at the tail waits for everything else (the tail-terminal barrier) and is
handed back to the step executor. Each result is also handed to `on_outcome` the moment it
exists (vetoes at once, the rest as they finish), so the caller can commit it durably.
The batch-wide result cap is applied where results are rendered (the prompt), not here:
a result is committed before its later siblings exist.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

import attrs

from atomic_agent.agent.loop_detector import LoopVerdict, ToolLoopTracker, veto_result
from atomic_agent.agent.tool_calls import ToolCall
from atomic_agent.hook_records import ResourceClass, ToolResult
from atomic_agent.tools.tool_registry import ToolRegistry

RunCall = Callable[[int, ToolCall], Awaitable[ToolResult]]


@attrs.frozen
class CallOutcome:
    index: int
    call: ToolCall
    result: ToolResult
    duration_ms: float
    vetoed: bool = False


@attrs.frozen
class BatchResult:
    outcomes: tuple[CallOutcome, ...]  # non-terminal calls, in batch-index order
    terminal: ToolCall | None
    loop_signals: tuple[LoopVerdict, ...] = ()
    cancelled: bool = False


def _cancelled_result() -> ToolResult:
    return ToolResult("cancelled", "cancelled before it finished", {"cancelled": True})


async def _stop(task: asyncio.Future[ToolResult]) -> ToolResult | None:
    """Cancel a running call and wait for it to end; its result when it ran to its end all the
    same (a started write cannot be stopped), None when it stopped or failed."""
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None if task.cancelled() or task.exception() is not None else task.result()


async def _run_one(index: int, call: ToolCall, run_call: RunCall, cancelled: asyncio.Event,
                   timeout_s: float | None, keep: Callable[[ToolResult, float], None]) -> tuple[ToolResult, float]:
    if cancelled.is_set():
        return _cancelled_result(), 0.0
    started = time.perf_counter()
    task = asyncio.ensure_future(run_call(index, call))
    stopper = asyncio.ensure_future(cancelled.wait())
    try:
        done, _ = await asyncio.wait({task, stopper}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        # the turn's own task was cancelled: stop the call instead of leaving it running unseen
        # after its turn settled it, and keep the result of a call that had finished meanwhile,
        # so the transcript does not call it "cancelled before it finished"
        finished = await _stop(task)
        if finished is not None:
            keep(finished, (time.perf_counter() - started) * 1000)
        raise
    finally:
        stopper.cancel()
    elapsed = (time.perf_counter() - started) * 1000
    if task not in done:
        finished = await _stop(task)
        if finished is not None:
            return finished, elapsed  # it ran to its end despite the stop (a started write): say so
        if cancelled.is_set():
            return _cancelled_result(), elapsed
        return ToolResult.error(f"{call.tool} did not finish within {timeout_s:g} s and was stopped",
                                timedOut=True), elapsed
    try:
        return task.result(), elapsed
    except Exception as exc:  # failures isolate: the sibling calls keep running
        return ToolResult.error(f"{call.tool} failed: {type(exc).__name__}: {exc}",
                                exception=type(exc).__name__), elapsed


def _groups(planned: Sequence[tuple[int, ToolCall]], registry: ToolRegistry) -> dict[ResourceClass, list[tuple[int, ToolCall]]]:
    groups: dict[ResourceClass, list[tuple[int, ToolCall]]] = {}
    for index, call in planned:
        groups.setdefault(registry.resource_class(call.tool), []).append((index, call))
    return groups


async def execute_batch(calls: Sequence[ToolCall], registry: ToolRegistry, tracker: ToolLoopTracker,
                        run_call: RunCall, cancelled: asyncio.Event,
                        on_loop: Callable[[LoopVerdict], None] | None = None,
                        timeout_s: float | None = None,
                        on_outcome: Callable[[CallOutcome], None] | None = None) -> BatchResult:
    terminal = calls[-1] if calls and registry.resource_class(calls[-1].tool) is ResourceClass.TERMINAL else None
    body = list(enumerate(calls[:-1] if terminal is not None else calls))
    results: dict[int, CallOutcome] = {}

    def record(outcome: CallOutcome) -> None:
        results[outcome.index] = outcome
        if on_outcome is not None:
            on_outcome(outcome)

    def keeper(index: int, call: ToolCall) -> Callable[[ToolResult, float], None]:
        return lambda result, ms: record(CallOutcome(index, call, result, ms))

    signals: list[LoopVerdict] = []
    survivors: list[tuple[int, ToolCall]] = []
    for index, call in body:  # phase 1: the synchronous loop gate
        verdict = tracker.record_call(call.tool, call.args)
        if verdict.level != "none":
            signals.append(verdict)
            if on_loop:
                on_loop(verdict)
        if verdict.vetoes or tracker.breaker_tripped():
            vetoed = veto_result(call.tool)
            tracker.record_outcome(call.tool, call.args, vetoed, vetoed=True)
            record(CallOutcome(index, call, vetoed, 0.0, vetoed=True))
        else:
            survivors.append((index, call))

    async def run_group(cls: ResourceClass, members: list[tuple[int, ToolCall]]) -> None:
        if cls is ResourceClass.PURE_READ:
            async def run_read(index: int, call: ToolCall) -> ToolResult:
                result, ms = await _run_one(index, call, run_call, cancelled, timeout_s, keeper(index, call))
                record(CallOutcome(index, call, result, ms))  # as soon as it exists, not when the group ends
                return result

            answers = await asyncio.gather(*(run_read(i, c) for i, c in members))
            # the tracker still sees outcomes in index order
            for (_, call), result in zip(members, answers, strict=True):
                tracker.record_outcome(call.tool, call.args, result)
            return
        for index, call in members:  # serial within the group
            result, ms = await _run_one(index, call, run_call, cancelled, timeout_s, keeper(index, call))
            tracker.record_outcome(call.tool, call.args, result)
            record(CallOutcome(index, call, result, ms))

    await asyncio.gather(*(run_group(cls, members) for cls, members in _groups(survivors, registry).items()))
    ordered = [results[i] for i in sorted(results)]
    return BatchResult(tuple(ordered), terminal, tuple(signals), cancelled=cancelled.is_set())
