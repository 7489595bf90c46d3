"""One macro-turn: user message -> 0..N tool steps -> reply (or finish).

The loop owns the turn's loop tracker, the step budget and the failure taxonomy: every
failure is classified once, cancellation ends the turn as cancelled (not failed), and a
tripped loop breaker ends it with a graceful synthetic reply (never a failure).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.loop_detector import LoopSettings, ToolLoopTracker
from atomic_agent.agent.step_executor import StepContext, execute_step
from atomic_agent.llm.provider_protocol import ProviderUnavailableError, TextProvider
from atomic_agent.reliability.failure_taxonomy import TurnCancelledError, classify_failure, error_code
from atomic_agent.sessions.record_turn_failure import record_turn_failure
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.tracing.trace_recorder import TraceRecorder

INFRA_CATEGORIES = ("transport", "provider_timeout", "grammar", "model", "storage")
# what a turn parked by a graceful stop tells the next inference (and the session's reader)
PARKED_MESSAGE = ("the agent was stopped (a graceful shutdown) before this turn finished; the conversation "
                  "above is intact: continue from it")


class TurnParked(Exception):
    """A graceful stop asked the turn to end at this step boundary (raised inside the loop)."""


@attrs.frozen
class TurnResult:
    session_id: str
    turn_index: int
    status: str  # "done" | "cancelled" | "failed" | "interrupted" (parked by a graceful stop)
    reason: str  # "reply" | "finish" | "max_steps" | "cancelled" | "interrupted" | <failure category>
    reply: str = ""
    steps: int = 0
    category: str | None = None
    error: str | None = None
    duration_ms: float = 0.0
    undelivered: tuple[str, ...] = ()  # steers accepted but never folded in: callers must re-route them
    turn_id: str = ""  # the admission ledger's id (set by the runtime)
    state: str = ""  # the ledger's final state: completed | failed | stopped | cancelled | merged
    merged_into: str | None = None  # sendMode "all": the turn that answered this message
    undelivered_ids: tuple[str, ...] = ()  # durable ids of `undelivered` (same order; "" when not durable)

    def handed_back(self) -> list[tuple[str, str]]:
        """(text, durable steer id or "") of each undelivered steer, in order: what a caller
        re-sends (`resend_steer_id`) or dismisses."""
        ids = self.undelivered_ids or ("",) * len(self.undelivered)
        return list(zip(self.undelivered, ids, strict=True))


StepContextFactory = Callable[[int, int, Sequence[str]], Awaitable[StepContext]]
# (turn_finished row, visible reply, failure category): writes the row and closes the turn atomically
# the ledger's finalizer; what it returns (if anything) completes once its commit is on disk
FinalizeTurn = Callable[[TranscriptEntry, str, "str | None"], "Awaitable[None] | None"]


class SteerInbox(Protocol):
    """The steers of the running turn as the loop sees them (the turns package's SteeringInbox):
    opened on entry, drained at each step boundary, closed on the way out with what is left."""

    def open(self, session_id: str, turn_id: str | None = None) -> None: ...

    def pending_count(self, session_id: str) -> int: ...

    def consume(self, session_id: str, record: Callable[[list[str]], object], limit: int | None = None) -> list[str]: ...

    def close_and_hand_back(self, session_id: str) -> list[tuple[int | None, str]]: ...


ONE_AT_A_TIME = "one-at-a-time"


@attrs.define
class TurnDeps:
    """Everything the loop depends on, as one explicit object; what a step needs beyond it
    reaches the step through the context `make_context` builds."""

    session: SessionState
    store: SessionRepository
    trace: TraceRecorder
    provider: Callable[[], TextProvider]  # the provider as built when a failure needs reporting
    cancelled: asyncio.Event
    make_context: StepContextFactory  # (turn, step, notices) -> the step's context
    emit: ev.EventSink
    max_steps: int
    inbox: SteerInbox | None = None
    turn_id: str | None = None  # the ledger turn this run is (steers are queued against it)
    opened_turn_index: int | None = None  # the ledger already wrote the opening rows at this index
    finalize: FinalizeTurn | None = None  # the ledger's one finalizer; None: just append the row
    steer_mode: str = ONE_AT_A_TIME  # agent.steerMode: fold the oldest steer per step, or "all" of them
    # a graceful stop: set -> end at the next step boundary as `interrupted` (a note, no
    # answer); set together with `cancelled` -> abandon the running step the same way
    park: asyncio.Event | None = None
    # what plugins show the person as the turn ends (MemoryPhase.turn_notices): turn index ->
    # (source, text) pairs, each emitted as a `turn_notice` before `turn_finished`
    turn_notices: Callable[[int], Sequence[tuple[str, str]]] | None = None


STEER_NOTICE_CHARS = 500


def steer_notice(text: str) -> str:
    clipped = text if len(text) <= STEER_NOTICE_CHARS else text[:STEER_NOTICE_CHARS] + "… (full text in ### conversation)"
    return f"The user wrote while you were working: {clipped}"


def _fold_steers(base: TurnDeps, turn_index: int, step: int, emit: ev.EventSink) -> list[str]:
    """Drain the inbox at a step boundary: each message becomes a real user transcript row."""
    if base.inbox is None:
        return []
    # one transaction: the steers leave the durable queue as they become user rows
    limit = 1 if base.steer_mode == ONE_AT_A_TIME else None
    steers = base.inbox.consume(base.session.id, lambda texts: base.store.append(
        base.session, [TranscriptEntry(USER, turn_index, text=t, step=step) for t in texts]), limit)
    if steers:
        for text in steers:
            emit(ev.event(ev.STEER_APPLIED, sessionId=base.session.id, turnIndex=turn_index, stepIndex=step, text=text))
            base.trace.record("steer_applied", turnIndex=turn_index, step=step, text=text)
    return [steer_notice(t) for t in steers]


def max_steps_reply(steps: int) -> str:
    return (f"I stopped after {steps} steps without finishing. Tell me how to continue, "
            "or narrow the task, and I will pick it up from here.")


async def run_turn(base: TurnDeps, text: str) -> TurnResult:
    """Run one turn on `base.session`; `base.make_context(turn, step, notices)` builds each step.

    The user message is stored before anything can fail, so an accepted message is never
    lost; building the first step's context (which reaches the provider) happens inside
    the failure handling."""
    session, store, trace, emit, max_steps = base.session, base.store, base.trace, base.emit, base.max_steps
    started = time.perf_counter()
    if base.opened_turn_index is None:
        turn_index = session.next_turn_index
        store.append(session, [TranscriptEntry(TURN_STARTED, turn_index), TranscriptEntry(USER, turn_index, text=text)])
    else:
        turn_index = base.opened_turn_index
    trace.record("turn_started", turnIndex=turn_index, userText=text)
    emit(ev.event(ev.TURN_STARTED, sessionId=session.id, turnIndex=turn_index))
    if base.inbox is not None:
        base.inbox.open(session.id, base.turn_id)
    tracker = ToolLoopTracker(LoopSettings.from_env())
    notices: list[str] = []
    status, reason, reply, steps, category, error = "done", "max_steps", "", 0, None, None
    try:
        for step in range(max_steps):
            if base.cancelled.is_set():
                raise TurnCancelledError()
            if base.park is not None and base.park.is_set():
                raise TurnParked()
            steps = step + 1
            emit(ev.event(ev.STEP_STARTED, sessionId=session.id, turnIndex=turn_index, step=step))
            trace.record("step_started", turnIndex=turn_index, step=step)
            step_started = time.perf_counter()
            notices = [*notices, *_fold_steers(base, turn_index, step, emit)]  # loop text first, then steers
            # steers the one-at-a-time mode left waiting: each gets its own answer in a later step
            left_waiting = base.inbox.pending_count(session.id) if base.inbox is not None else 0
            ctx = await base.make_context(turn_index, step, notices)
            ctx.tracker = tracker
            outcome = await execute_step(ctx)
            trace.record("step_finished", turnIndex=turn_index, step=step,
                         durationMs=round((time.perf_counter() - step_started) * 1000, 1),
                         cacheN=outcome.cache_n, promptN=outcome.prompt_n)
            if outcome.cancelled:
                raise TurnCancelledError()
            if outcome.breaker:
                reply, reason = tracker.forced_loop_reply(), "reply"
                store.append(session, [TranscriptEntry(REPLY, turn_index, text=reply, tool="reply", step=step)])
                break
            if outcome.kind in ("reply", "finish"):
                reply, reason = outcome.reply_text, outcome.kind
                if outcome.kind == "finish":
                    session.status = "finished"
                    store.save_state(session)
                if not left_waiting:
                    break  # a steer that arrived during this inference is handed back, not answered
                notices = tracker.take_notices()
                continue
            notices = tracker.take_notices()
        else:
            reply = max_steps_reply(max_steps)
            store.append(session, [TranscriptEntry(REPLY, turn_index, text=reply, tool="reply", step=steps)])
    except (Exception, asyncio.CancelledError) as exc:
        failure = classify_failure(exc, cancelled=base.cancelled.is_set())
        category, error = failure.category, str(failure)
        if _parked(base, exc, category):
            status, reason, category, error = "interrupted", "interrupted", None, PARKED_MESSAGE
        elif category == "cancelled":
            status, reason = "cancelled", "cancelled"
        else:
            status, reason = "failed", category
            emit(ev.event(ev.STEP_ERROR, sessionId=session.id, turnIndex=turn_index, step=max(steps - 1, 0),
                          category=category, code=error_code(category), message=error))
            trace.record("error", turnIndex=turn_index, category=category, message=error)
            unavailable = exc if isinstance(exc, ProviderUnavailableError) else exc.__cause__
            if isinstance(unavailable, ProviderUnavailableError):
                provider = base.provider()
                emit(ev.event(ev.LLM_UNAVAILABLE, sessionId=session.id, mode=getattr(provider, "mode", "unknown"),
                              hint=unavailable_hint(provider, unavailable)))
            if category in INFRA_CATEGORIES:
                emit(ev.event(ev.LOOP_FAILED, sessionId=session.id, turnIndex=turn_index, category=category,
                              message=error))
        # durable calls: settle this turn's open calls; a failure also leaves a note
        record_turn_failure(store, session, turn_index, error or category or reason, cancelled=status == "cancelled",
                            interrupted=status == "interrupted")
        if isinstance(exc, asyncio.CancelledError):  # cancelled: its caller hears no answer to wait for
            try:
                await _finish(base, turn_index, status, reason, steps, started, emit, reply, category, wait=False)
            except BaseException:
                _hand_back_on_error(base, turn_index, emit)
                raise
            _hand_back(base, turn_index, emit)
            raise
    try:
        await _finish(base, turn_index, status, reason, steps, started, emit, reply, category)
    except BaseException:
        _hand_back_on_error(base, turn_index, emit)
        raise
    undelivered, undelivered_ids = _hand_back(base, turn_index, emit)
    return TurnResult(session.id, turn_index, status, reason, reply, steps, category, error,
                      round((time.perf_counter() - started) * 1000, 1), undelivered,
                      undelivered_ids=undelivered_ids)


def _parked(base: TurnDeps, exc: BaseException, category: str) -> bool:
    """Did a graceful stop end this turn (at a step boundary, or by abandoning its step)?"""
    if isinstance(exc, TurnParked):
        return True
    return base.park is not None and base.park.is_set() and category == "cancelled"


def unavailable_hint(provider: TextProvider, error: ProviderUnavailableError) -> str:
    """What to do about an unavailable provider. A server that answered (503 "loading",
    overloaded) is up: saying no server answered would send the user to start a second one."""
    if error.status is not None:
        where = f" at {error.url}" if error.url else ""
        return (f"The model server{where} answered HTTP {error.status}: it is running but not ready (still "
                "loading its model, or overloaded). Wait a moment and send the message again.")
    return provider.unavailable_hint()


def _hand_back(base: TurnDeps, turn_index: int, emit: ev.EventSink) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(texts, durable ids) of the steers handed back; the rows stay queued until re-sent or dismissed."""
    if base.inbox is None:
        return (), ()
    pending = base.inbox.close_and_hand_back(base.session.id)
    for steer_id, text in pending:
        extra = {} if steer_id is None else {"steerId": str(steer_id)}
        emit(ev.event(ev.STEER_UNDELIVERED, sessionId=base.session.id, turnIndex=turn_index, text=text, **extra))
    return tuple(t for _, t in pending), tuple("" if i is None else str(i) for i, _ in pending)


def _hand_back_on_error(base: TurnDeps, turn_index: int, emit: ev.EventSink) -> None:
    """The turn ends with an error (its finalize failed): its window still closes, or the next
    turn of the session would inherit it and take steers under this turn's id. Its caller gets
    the error, not the steers; the lifecycle requeues them (`undelivered_to`) in send order —
    also when this hand-back write fails too, which must not hide the first error."""
    with contextlib.suppress(Exception):
        _hand_back(base, turn_index, emit)


async def _finish(base: TurnDeps, turn_index: int, status: str, reason: str, steps: int, started: float,
                  emit: ev.EventSink, reply: str, category: str | None = None, wait: bool = True) -> None:
    """Finalize, then (with `wait`, once the finalize is on disk) announce the reply and the end."""
    duration = round((time.perf_counter() - started) * 1000, 1)
    row = TranscriptEntry(TURN_FINISHED, turn_index, status=status, reason=reason)
    if base.finalize is not None:
        durable = base.finalize(row, reply if status == "done" else "", category)
        if durable is not None and wait:
            await durable
    else:
        base.store.append(base.session, [row])
    base.trace.record("turn_finished", turnIndex=turn_index, reason=reason, status=status, stepCount=steps,
                      durationMs=duration)
    if reply and status == "done":
        emit(ev.event(ev.ASSISTANT_REPLY, sessionId=base.session.id, turnIndex=turn_index, text=reply))
    for source, text in base.turn_notices(turn_index) if base.turn_notices is not None else ():
        emit(ev.event(ev.TURN_NOTICE, sessionId=base.session.id, turnIndex=turn_index, source=source, text=text))
    emit(ev.event(ev.TURN_FINISHED, sessionId=base.session.id, turnIndex=turn_index, status=status, reason=reason,
                  steps=steps, durationMs=duration))
    if base.session.status == "finished":
        emit(ev.event(ev.SESSION_FINISHED, sessionId=base.session.id))
