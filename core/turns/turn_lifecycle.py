"""A turn from admission to its one finalization, and the per-lane stop.

`run` admits the message durably, announces `turn_queued` (with the turn id and how many
turns are ahead in the lane), waits its turn in the TurnController, starts the turn under
a new writer generation, hands the running turn to `execute`, and gives the loop a
finalizer that closes the turn in the same transaction as its last transcript row. A
submission cancelled while waiting is finalized as cancelled without ever running.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.runtime.turn_controller import ORIGINS, SubmissionCancelledError, TurnController
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.testing.chaos_mutants import ack_before_commit, mutant_on  # test-only chaos mutants
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_owner import OwnerLease
from atomic_agent.turns.turn_states import MERGED, QUEUED, StartedTurn, TurnRecord, TurnTicket, final_state

FinalizeTurn = Callable[[TranscriptEntry, str, "str | None"], None]
ExecuteTurn = Callable[[SessionState, StartedTurn, asyncio.Event, FinalizeTurn], Awaitable[TurnResult]]


@attrs.define
class _Running:
    turn_id: str
    cancel: asyncio.Event
    stopped: bool = False
    state: str = ""


class TurnLifecycle:
    def __init__(self, sessions: SessionStore, controller: TurnController, state_dir: Path,
                 send_mode: Callable[[], str], executor_for: Callable[[str], ExecuteTurn] | None = None) -> None:
        self.sessions = sessions
        self.controller = controller
        self.lease = OwnerLease(state_dir)
        self.ledger = TurnLedger(sessions, self.lease.owner)
        self.steers = SteerQueue(sessions, self.lease.owner)
        self._send_mode = send_mode
        self._running: dict[str, _Running] = {}  # lane -> its running turn in this process
        self._executor_for = executor_for
        self._results_for_waiters: dict[str, TurnResult] = {}  # turns answered by another submission
        self._withdrawn: set[str] = set()  # cancelled while waiting (even if recording that failed)

    def admit(self, session_id: str, text: str, origin: str) -> TurnTicket:
        if origin not in ORIGINS:  # refuse before anything is written
            raise ValueError(f"unknown turn origin {origin!r}; one of {', '.join(ORIGINS)}")
        return self.ledger.admit(session_id, text, origin)

    async def run(self, text: str, session_id: str, origin: str, sink: ev.EventSink,
                  cancelled: asyncio.Event | None, execute: ExecuteTurn) -> TurnResult:
        if mutant_on("ack_before_commit"): return await ack_before_commit(self, text, session_id, origin, sink, cancelled, execute)  # noqa: E701 test-only chaos mutant
        ticket = self.admit(session_id, text, origin)  # durable before anyone hears of it
        sink(ev.event(ev.TURN_QUEUED, sessionId=session_id, turnId=ticket.turn_id, position=ticket.position,
                      origin=origin))
        return await self.run_admitted(ticket, sink, cancelled, execute)

    async def run_admitted(self, ticket: TurnTicket, sink: ev.EventSink, cancelled: asyncio.Event | None,
                           execute: ExecuteTurn) -> TurnResult:
        try:
            return await self.controller.submit(
                ticket.lane, lambda: self._run_started(ticket, cancelled, execute),
                origin=ticket.origin, on_event=sink, cancelled=cancelled)
        except SubmissionCancelledError:
            self._withdrawn.add(ticket.turn_id)
            self.ledger.cancel_queued(ticket.turn_id, "cancelled before it started")
            raise

    def stop(self, lane: str) -> bool:
        """Stop the turn running on `lane` (state `stopped`); its queued turns and every
        other lane carry on. False when nothing runs there."""
        running = self._running.get(lane)
        if running is None or running.cancel.is_set():
            return False
        running.stopped = True
        running.cancel.set()
        return True

    def running_turn_id(self, lane: str) -> str | None:
        running = self._running.get(lane)
        return None if running is None else running.turn_id

    async def _run_started(self, ticket: TurnTicket, cancelled: asyncio.Event | None,
                           execute: ExecuteTurn) -> TurnResult:
        await self._catch_up(ticket, cancelled)
        session = self.sessions.load(ticket.session_id)  # re-read inside the lane lock: never stale
        started = self.ledger.start(ticket.turn_id, session, self._send_mode())
        if started is None:
            return self._not_started(ticket)
        running = _Running(ticket.turn_id, asyncio.Event())
        self._running[ticket.lane] = running
        link = _link(cancelled, running.cancel)

        def finalize(row: TranscriptEntry, reply: str, category: str | None) -> None:
            state = final_state(row.status or "failed", running.stopped)
            self.ledger.finalize(started.guard, session, [row], state, row.reason, category, reply)
            running.state = state

        try:
            result = await execute(session, started, running.cancel, finalize)
        finally:
            if self._running.get(ticket.lane) is running:
                del self._running[ticket.lane]
            if link is not None:
                link.cancel()
        result = attrs.evolve(result, turn_id=ticket.turn_id, state=running.state)
        for merged_id, _ in started.merged:
            self._results_for_waiters[merged_id] = attrs.evolve(result, turn_id=merged_id, merged_into=ticket.turn_id,
                                                           state=MERGED, undelivered=())
        return result

    async def _catch_up(self, ticket: TurnTicket, cancelled: asyncio.Event | None) -> None:
        """First run any older turn of the lane this process admitted whose own start failed
        (a transient store error left it queued): the lane stays FIFO, and the message is
        still answered exactly once. A dead owner's queued turns are recovery's to resume."""
        if self._executor_for is None:
            return
        for older in self.ledger.lane(ticket.lane, (QUEUED,)):
            if older.admitted_order >= ticket.admitted_order:
                break
            if older.owner == self.lease.owner and older.turn_id not in self._withdrawn:
                result = await self._run_started(ticket_of(older), cancelled, self._executor_for(older.text))
                self._results_for_waiters[older.turn_id] = result  # a still-parked waiter hears this answer

    def _not_started(self, ticket: TurnTicket) -> TurnResult:
        """The result for a turn that never ran here: merged into another, or already final."""
        kept = self._results_for_waiters.pop(ticket.turn_id, None)
        if kept is not None:
            return kept
        turn: TurnRecord | None = self.ledger.get(ticket.turn_id)
        state = turn.state if turn is not None else "cancelled"
        status = "done" if state == MERGED else "cancelled"
        return TurnResult(ticket.session_id, (turn.turn_index if turn and turn.turn_index is not None else -1),
                          status, state, turn_id=ticket.turn_id, state=state,
                          merged_into=turn.merged_into if turn is not None else None)


def ticket_of(turn: TurnRecord) -> TurnTicket:
    """A ticket for a turn admitted earlier (recovery resubmits it without admitting again)."""
    return TurnTicket(turn.turn_id, turn.session_id, turn.lane, turn.admitted_order, 0, turn.text, turn.origin)


def _link(source: asyncio.Event | None, target: asyncio.Event) -> asyncio.Task[None] | None:
    """Set `target` when the caller's `source` is set; the caller's event is never set by a stop."""
    if source is None:
        return None
    if source.is_set():
        target.set()
        return None

    async def follow() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await source.wait()
            target.set()

    return asyncio.ensure_future(follow())
