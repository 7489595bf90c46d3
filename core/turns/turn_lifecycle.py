"""A turn from admission to its one finalization, and the per-lane stop.

`run` admits the message durably, announces `turn_queued` (with the turn id and how many
turns are ahead in the lane), waits its turn in the TurnController (this process) and then
in the ledger (every process on the state dir: a turn starts only as the oldest live turn
of its lane), starts the turn under a new writer generation, hands the running turn to
`execute`, and gives the loop a finalizer that closes the turn in the same transaction as
its last transcript row. A submission cancelled while waiting is finalized as cancelled
without ever running.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Protocol

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import FinalizeTurn, TurnResult
from atomic_agent.reliability.failure_taxonomy import is_lasting_store_failure
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.store_errors import SessionStoreError, StaleWriterError
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.storage.group_commit import deferred_sync
from atomic_agent.turns.admissible_text import check_text
from atomic_agent.turns.durable_steering import SteerAlreadyTakenError
from atomic_agent.turns.graceful_stop import RuntimeStoppingError, TurnParkedError
from atomic_agent.turns.request_keys import RequestKey
from atomic_agent.turns.restart_recovery import interrupt_turn, park_turn, steers_to_turns, take_over_dead_turn
from atomic_agent.turns.session_backends import DEFAULT_BACKEND, SessionBackend
from atomic_agent.turns.turn_controller import ORIGINS, LanePause, SubmissionCancelledError, TurnController
from atomic_agent.turns.turn_owner import OwnerLease
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from atomic_agent.turns.turn_states import (
    MERGED,
    PARKED,
    QUEUED,
    RUNNING,
    LaneBusy,
    StartedTurn,
    TurnRecord,
    TurnTicket,
    final_state,
    ticket_of,
)

# The one finalizer of a running turn, and what happens when its write fails.
#
# A finalize that fails (a locked or full disk) would leave the turn `running` in the ledger,
# and since a turn starts only as the oldest live turn of its lane, the whole session would be
# stuck until a restart. So a failed finalize is tried once more (the failure may have been
# transient; the write is one transaction, so a rolled-back first try left nothing), and if
# that fails too the turn is moved to `interrupted` by a smaller, fresh transaction (no
# transcript rows): the lane is free, and a restart answers what the turn owed. The caller
# still gets the original error either way — the turn's answer was not made durable.

UNFINALIZED_REASON = "the turn's final write failed"


def finalize_or_interrupt(ledger: TurnRepository, guard: TurnGuard, session: SessionState, row: TranscriptEntry,
                          state: str, category: str | None, reply: str) -> None:
    """`ledger.finalize`, retried once; on a second failure the turn ends `interrupted`."""
    try:
        ledger.finalize(guard, session, [row], state, row.reason, category, reply)
        return
    except StaleWriterError:
        raise  # fenced out: someone else already decided this turn
    except Exception as first:
        try:
            ledger.finalize(guard, session, [row], state, row.reason, category, reply)
            return
        except StaleWriterError:
            turn = ledger.get(guard.turn_id)
            if turn is not None and turn.state == state and turn.generation == guard.generation:
                return  # the first try did commit; only its answer was lost
            raise first from None  # recovery fenced it meanwhile: the lane is not stuck
        except Exception:
            pass
        try:
            ledger.interrupt_unfinalized(guard, f"{UNFINALIZED_REASON}: {type(first).__name__}")
        except Exception as exc:  # still running in the ledger: a restart interrupts it
            print(f"atomic-agent: turn {guard.turn_id} could not be finalized or marked interrupted "
                  f"({type(exc).__name__}: {exc}); it stays running until the next restart", file=sys.stderr)
        raise first


# A running turn as its lifecycle holds it: how it is told to stop, and the small helpers
# around the tasks that run turns nobody waits on.

@attrs.frozen
class TurnStops:
    """How a running turn is told to stop: `cancel` now (a user stop, the caller's cancel, a
    hard park), `park` at the next step boundary (a graceful stop: it ends `interrupted`)."""

    cancel: asyncio.Event
    park: asyncio.Event


@attrs.define
class RunningTurn:
    turn_id: str
    cancel: asyncio.Event
    park: asyncio.Event = attrs.field(factory=asyncio.Event)
    stopped: bool = False
    state: str = ""

    def stops(self) -> TurnStops:
        return TurnStops(self.cancel, self.park)


def forget_unattended(tasks: set[asyncio.Task[TurnResult]]) -> Callable[[asyncio.Task[TurnResult]], None]:
    def done(task: asyncio.Task[TurnResult]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if isinstance(exc, TurnParkedError):
                return  # a graceful stop left it queued: the next start answers it
            print(f"atomic-agent: a turn made from a handed-back steer failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)

    return done


def link_cancel(source: asyncio.Event | None, target: asyncio.Event) -> asyncio.Task[None] | None:
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


ExecuteTurn = Callable[[SessionState, StartedTurn, TurnStops, FinalizeTurn], Awaitable[TurnResult]]


# A store that failed for a moment (a database failover, a lock held too long) is waited out:
# a turn's start is tried again while its caller waits. Past that, the caller hears the error,
# and in the background, once the store answers again, a turn whose start never got through is
# run (for nobody: its answer lands in the transcript and under its request key), and a turn cut
# off mid-way is settled as a restart would (interrupted, its calls answered, a continuation
# admitted that answers the message). So an accepted message is never left owed to nobody.
START_RETRY_S = (0.2, 0.5, 1.0, 2.0, 4.0)  # the pauses between tries of a turn's start
# ... between looks at the store once the caller was told; the last repeats until the process stops
SETTLE_RETRY_S = (0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)


def settle_pauses() -> Iterator[float]:
    yield from SETTLE_RETRY_S
    while True:
        yield SETTLE_RETRY_S[-1]


def is_transient_store_failure(exc: BaseException) -> bool:
    """A store error that may pass (a dropped connection, a lock): not damage, not a fence."""
    return isinstance(exc, SessionStoreError) and not isinstance(exc, StaleWriterError) \
        and not is_lasting_store_failure(exc)


class ParkedTurns(Protocol):
    """The parked turns this process resumes (parked_turn_resumer.ParkedTurnResumer)."""

    def waiting_on(self, turn: TurnRecord) -> list[str]: ...

    def resuming(self, turn_id: str) -> bool: ...

    def resume(self, turn: TurnRecord, continue_after: bool = True, sink: ev.EventSink = ev.discard,
               settle: Callable[[str], Awaitable[int]] | None = None) -> asyncio.Future[TurnResult]: ...


def report_resume_failure(future: asyncio.Future[TurnResult]) -> None:
    if not future.cancelled() and future.exception() is not None:
        exc = future.exception()
        print(f"atomic-agent: resuming a parked turn failed: {type(exc).__name__}: {exc}", file=sys.stderr)


class ExecutorFor(Protocol):
    """The executor of a turn's text (TurnServices.executor); `tool_choice` forces a first tool."""

    def __call__(self, text: str, tool_choice: str | None = None) -> ExecuteTurn: ...


class TurnLifecycle:
    def __init__(self, sessions: SessionRepository, controller: TurnController, state_dir: Path,
                 send_mode: Callable[[], str], executor_for: ExecutorFor,
                 backend: SessionBackend = DEFAULT_BACKEND) -> None:
        self.sessions = sessions
        self.controller = controller
        self.lease: OwnerLease = backend.lease(state_dir)
        self.ledger: TurnRepository = backend.ledger(sessions, self.lease.owner)
        self.steers: SteerRepository = backend.steers(sessions, self.lease.owner)
        self._send_mode = send_mode
        self._running: dict[str, RunningTurn] = {}  # lane -> its running turn in this process
        self.executor_for = executor_for
        self._results_for_waiters: dict[str, TurnResult] = {}  # turns answered by another submission
        self._withdrawn: set[str] = set()  # cancelled while waiting (even if recording that failed)
        self._awaiting: dict[str, asyncio.Event | None] = {}  # turn -> cancel event of the caller waiting on it
        self._caught_up: dict[str, asyncio.Future[TurnResult]] = {}  # waited-on turns run by a catch-up
        self.unattended: set[asyncio.Task[TurnResult]] = set()  # requeued steers' turns nobody waits on
        self._settling: set[asyncio.Task[None]] = set()  # turns cut off by a store failure, being settled
        self.closing = False
        self.stopping = False  # a graceful stop began: nothing is admitted or started any more
        # resumes the parked turns found in a lane's way (the runtime sets it: it needs the gate)
        self.parked: ParkedTurns | None = None
        # settles interrupted turns and runs the continuations that answer them (the runtime's
        # recovery; set by the runtime): what a turn cut off by a store failure is handed to
        self.recover_now: Callable[[], Awaitable[object]] | None = None

    def admit(self, session_id: str, text: str, origin: str, resend_steer_id: str | None = None,
              request_key: RequestKey | None = None) -> TurnTicket:
        """Admit a turn durably. With `resend_steer_id` the turn re-sends that handed-back
        steer: its row is deleted in the admission's own transaction (a death at any point
        leaves the message in exactly one place), and SteerAlreadyTakenError admits nothing
        when the row is already gone (re-sent, dismissed or requeued). With `request_key`
        the client's idempotency key is committed in the same transaction, and a key that
        already admitted a turn raises DuplicateRequestError with nothing written.

        Refused before anything is written: an unknown origin, text that is not valid
        Unicode (InvalidTextError), and any message once a graceful stop began
        (RuntimeStoppingError)."""
        if origin not in ORIGINS:  # refuse before anything is written (a continuation is recovery's alone)
            raise ValueError(f"unknown turn origin {origin!r}; one of {', '.join(ORIGINS)}")
        check_text(text)
        if self.stopping or self.closing:
            raise RuntimeStoppingError()
        if resend_steer_id is None and request_key is None:
            return self.ledger.admit(session_id, text, origin)
        with self.sessions.write() as handle:
            if resend_steer_id is not None and self.steers.take_handed_back(handle, resend_steer_id) is None:
                raise SteerAlreadyTakenError(resend_steer_id)
            ticket = self.ledger.admit_in(handle, session_id, text, origin, session_id, uuid.uuid4().hex)
            if resend_steer_id is not None:  # a key the steer was sent with now names this turn
                self.ledger.rebind_steer_key_in(handle, resend_steer_id, ticket.turn_id)
            if request_key is not None:
                self.ledger.remember_key_in(handle, request_key, ticket.turn_id, session_id)
            return ticket

    def dismiss_steer(self, steer_id: str) -> bool:
        """Drop a handed-back steer (the user chose not to re-send it); False when already gone."""
        return self.steers.dismiss(steer_id)

    def requeue_handed_back(self, turn_id: str) -> list[TurnTicket]:
        """No live caller can take what the ended turn `turn_id` handed back: its steers become
        queued turns of their lane (this owner's), in send order, in one transaction. A steer
        the store refused to mark handed back is one of them: left alone it would wait, taken
        by nobody, for the next restart, and be answered after the steers sent after it."""
        return steers_to_turns(self.ledger, self.steers, self.steers.undelivered_to(turn_id), self.lease.owner)

    def requeue_and_run(self, turn_id: str) -> None:
        """`requeue_handed_back`, then run those turns in the background for nobody (they queue
        behind whatever the lane holds). At shutdown they stay queued for recovery."""
        if self.closing or self.stopping:
            return
        for ticket in self.requeue_handed_back(turn_id):
            task = asyncio.ensure_future(self.run_for_nobody(ticket, ev.discard, self.executor_for))
            self.unattended.add(task)
            task.add_done_callback(forget_unattended(self.unattended))

    def _settle_when_stranded(self, turn_id: str, unstarted: TurnTicket | None = None) -> None:
        """In the background, once the store answers: a turn of this owner left running with
        nothing here to run it (a store failure cut it off, or a start committed without its
        answer) is interrupted and handed to recovery, which answers its open calls and admits
        the continuation that answers its message. With `unstarted` (a turn whose every start
        try failed, its caller told so), the turn still queued is run for nobody, as the next
        start would. Nothing re-runs; a turn that ended, or that another process or a later
        message of its lane took, is left alone."""
        if self.closing or self.stopping or self.recover_now is None:
            return
        task = asyncio.ensure_future(self._settle_stranded(turn_id, unstarted))
        self._settling.add(task)
        task.add_done_callback(self._settling.discard)

    async def _settle_stranded(self, turn_id: str, unstarted: TurnTicket | None) -> None:
        if unstarted is not None:  # its start has just failed every try: give the store a moment first
            await asyncio.sleep(SETTLE_RETRY_S[0])
        for pause_s in settle_pauses():  # until the store answers, or this process stops
            if self.closing or self.stopping:
                return  # the next start's recovery settles it
            try:
                turn = self.ledger.get(turn_id)
                if turn is None or turn.owner != self.lease.owner or self._runs_here(turn_id):
                    return
                if turn.state == RUNNING:
                    if interrupt_turn(self.ledger, turn) and self.recover_now is not None:
                        await self.recover_now()
                elif turn.state == QUEUED and unstarted is not None and turn_id not in self._awaiting \
                        and turn_id not in self._withdrawn:
                    await self.run_for_nobody(unstarted, ev.discard, self.executor_for)
                return
            except Exception as exc:
                if not is_transient_store_failure(exc):
                    print(f"atomic-agent: turn {turn_id} could not be settled after a store failure: "
                          f"{type(exc).__name__}: {exc}; the next start settles it", file=sys.stderr)
                    return
            await asyncio.sleep(pause_s)

    async def close(self) -> None:
        """Shutdown: stop the unattended turns (a queued one stays queued for recovery)."""
        self.closing = True
        for settling in list(self._settling):  # the next start's recovery settles what they had not
            settling.cancel()
        for task in list(self.unattended):
            task.cancel()
        if self.unattended:
            await asyncio.gather(*self.unattended, return_exceptions=True)

    async def run_for_nobody(self, ticket: TurnTicket, sink: ev.EventSink,
                             execute_for: Callable[[str], ExecuteTurn]) -> TurnResult:
        """Run an admitted turn nobody waits on (recovery): what it hands back is requeued and
        run the same way, so no steer is left to a caller that does not exist."""
        follow_ups: list[TurnTicket] = []
        try:
            result = await self.run_admitted(ticket, sink, None, execute_for(ticket.text))
        finally:
            with contextlib.suppress(Exception):
                follow_ups = self.requeue_handed_back(ticket.turn_id)
        for follow_up in follow_ups:
            await self.run_for_nobody(follow_up, sink, execute_for)
        return attrs.evolve(result, undelivered=(), undelivered_ids=())

    async def run(self, text: str, session_id: str, origin: str, sink: ev.EventSink,
                  cancelled: asyncio.Event | None, execute: ExecuteTurn,
                  resend_steer_id: str | None = None, request_key: RequestKey | None = None) -> TurnResult:
        with deferred_sync():  # committed now; on disk with the fsync every concurrent admission shares
            ticket = self.admit(session_id, text, origin, resend_steer_id, request_key)
        try:
            await self.sessions.wait_durable()  # durable before anyone hears of it
        except BaseException:
            with contextlib.suppress(Exception):  # nobody was told: withdraw it rather than leave it to nobody
                self.ledger.cancel_queued(ticket.turn_id, "cancelled before it was acknowledged")
            raise
        sink(ev.event(ev.TURN_QUEUED, sessionId=session_id, turnId=ticket.turn_id, position=ticket.position,
                      origin=origin))
        return await self.run_admitted(ticket, sink, cancelled, execute)

    async def run_admitted(self, ticket: TurnTicket, sink: ev.EventSink, cancelled: asyncio.Event | None,
                           execute: ExecuteTurn) -> TurnResult:
        self._awaiting[ticket.turn_id] = cancelled
        try:
            return await self.controller.submit(
                ticket.lane, lambda: self._run_started(ticket, cancelled, execute),
                origin=ticket.origin, on_event=sink, cancelled=cancelled)
        except SubmissionCancelledError:
            self._withdrawn.add(ticket.turn_id)  # first: even if recording the cancel fails
            caught_up = self._caught_up.get(ticket.turn_id)
            if self.ledger.cancel_queued(ticket.turn_id, "cancelled before it started") or caught_up is None:
                raise
            # an older-turn catch-up of its lane started it before the cancel landed: too late
            # to withdraw, so this caller hears how it ended (the cancel stops it if still running)
            self._withdrawn.discard(ticket.turn_id)
            result = await asyncio.shield(caught_up)
            self._results_for_waiters.pop(ticket.turn_id, None)
            return result
        finally:
            self._awaiting.pop(ticket.turn_id, None)
            self._caught_up.pop(ticket.turn_id, None)

    def stop(self, lane: str, turn_id: str | None = None) -> bool:
        """Stop the turn running on `lane` (state `stopped`); its queued turns and every
        other lane carry on. False when nothing runs there (or, with `turn_id`, when the
        running turn is another one)."""
        running = self._running.get(lane)
        if running is None or running.cancel.is_set() or turn_id not in (None, running.turn_id):
            return False
        running.stopped = True
        running.cancel.set()
        return True

    def running_turn_id(self, lane: str) -> str | None:
        running = self._running.get(lane)
        return None if running is None else running.turn_id

    def running_count(self) -> int:
        return len(self._running)

    def park_all(self, *, hard: bool) -> int:
        """Ask every running turn to park (graceful_stop): at its next step boundary, or with
        `hard` at once (its step is abandoned); how many were asked."""
        for running in self._running.values():
            running.park.set()
            if hard:
                running.cancel.set()
        return len(self._running)

    async def _run_started(self, ticket: TurnTicket, cancelled: asyncio.Event | None,
                           execute: ExecuteTurn) -> TurnResult:
        retried = False  # a try failed: its start may have committed without its answer
        for pause_s in (*START_RETRY_S, None):
            try:
                opened = await self._start_in_turn(ticket, cancelled)
                break
            except Exception as exc:
                retried = True
                if is_lasting_store_failure(exc):  # damaged or full: settle it, do not leave it queued for ever
                    with contextlib.suppress(Exception):
                        self.ledger.interrupt_queued(ticket.turn_id, f"could not start: {type(exc).__name__}: {exc}")
                if pause_s is None or not is_transient_store_failure(exc) or self.closing:
                    # its start may have committed unanswered, or (the store still down) not
                    # have got through at all; a turn cancelled or parked stays as it is
                    self._settle_when_stranded(ticket.turn_id, ticket if is_transient_store_failure(exc) else None)
                    raise
                await asyncio.sleep(pause_s)  # hold and try again: the store may be back in a moment
        if opened is None:
            if retried:  # a start that committed but whose answer was lost left it running here for nobody
                self._settle_when_stranded(ticket.turn_id)
            return self._not_started(ticket)
        session, started = opened
        running = RunningTurn(ticket.turn_id, asyncio.Event())
        if self.stopping:  # a stop began while it was starting: end it at its first step boundary
            running.park.set()
        self._running[ticket.lane] = running
        link = link_cancel(cancelled, running.cancel)

        def finalize(row: TranscriptEntry, reply: str, category: str | None) -> asyncio.Future[None]:
            """Close the turn (committed at once); the future completes once that is on disk,
            which the loop awaits before it announces the reply."""
            state = final_state(row.status or "failed", running.stopped)
            with deferred_sync():
                finalize_or_interrupt(self.ledger, started.guard, session, row, state, category, reply)
            running.state = state
            durable = asyncio.ensure_future(self.sessions.wait_durable())
            durable.add_done_callback(lambda f: f.cancelled() or f.exception())  # whoever awaits it sees it
            return durable

        try:
            result = await execute(session, started, running.stops(), finalize)
            await self.sessions.wait_durable()  # its answer is on disk before the caller hears it
        except BaseException as exc:
            with contextlib.suppress(Exception):  # its caller gets the error, not the steers: requeue them
                self.requeue_and_run(ticket.turn_id)
            if not running.state and is_transient_store_failure(exc):
                self._settle_when_stranded(ticket.turn_id)  # cut off mid-turn: answered once it is back
            raise
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

    async def _start_in_turn(self, ticket: TurnTicket, cancelled: asyncio.Event | None
                             ) -> tuple[SessionState, StartedTurn] | None:
        """Start the turn once it is the oldest live turn of its lane across every owner.

        An older turn this process admitted runs first, right here (its own start may have
        failed on a transient store error): the lane stays FIFO and the message is answered
        once. A dead owner's queued turn is adopted and run the same way, and a turn a dead
        owner (or this one, after a failed finalize) left running is interrupted as recovery
        would. A live owner's turn is waited for, polling with a growing pause: two owners
        never run one lane at once."""
        pause = LanePause(cancelled)
        while True:
            if self.stopping:  # a graceful stop: it stays queued for the next start
                raise TurnParkedError(ticket.turn_id, ticket.session_id)
            session = self.sessions.load(ticket.session_id)  # re-read inside the lane lock: never stale
            with deferred_sync():  # acknowledges nothing: the next durable commit (a tool batch, the finalize) covers it
                outcome = self.ledger.start(ticket.turn_id, session, self._send_mode())
            if not isinstance(outcome, LaneBusy):
                return None if outcome is None else (session, outcome)
            blocker = outcome.blocker
            mine = blocker.owner == self.lease.owner
            waiter_cancel = self._awaiting.get(blocker.turn_id)  # its caller, when still waiting for it
            if blocker.state == QUEUED and mine and (blocker.turn_id in self._withdrawn
                                                     or (waiter_cancel is not None and waiter_cancel.is_set())):
                self._withdrawn.add(blocker.turn_id)  # its caller cancelled (and may not have recorded it)
                self.ledger.cancel_queued(blocker.turn_id, "cancelled before it started")
            elif blocker.state == QUEUED and mine:
                await self._catch_up(blocker, waiter_cancel if blocker.turn_id in self._awaiting else cancelled)
            elif blocker.state == QUEUED and not self.lease.is_alive(blocker.owner):
                if self.ledger.adopt(blocker, f"adopted by {self.lease.owner}: its owner died"):
                    await self._run_started(ticket_of(blocker), None, self.executor_for(blocker.text))
                    self.requeue_and_run(blocker.turn_id)  # nobody waits on it: run its steers as turns
            elif blocker.state == PARKED:
                self._resume_parked(blocker)
                await pause.wait()  # it holds the lane until it is resumed, here or by its live owner
            elif not self.lease.is_alive(blocker.owner) or (mine and not self._runs_here(blocker.turn_id)):
                # left running by a dead owner, or by this one when even its fallback finalize
                # failed (finalize_or_interrupt): nobody will ever finish it. Waiting on an
                # approval, it is parked instead (its record stays pending and is shown again)
                if not self._park_dead_turn(blocker):
                    take_over_dead_turn(self.ledger, blocker)
            else:
                await pause.wait()  # a live owner holds the lane

    async def _catch_up(self, blocker: TurnRecord, cancelled: asyncio.Event | None) -> None:
        """Run an older queued turn of this owner before ours: its start failed on a store
        error (its caller got that error and left), or its caller is still waiting further
        back in the lane (a cancellable wait lost its place). A waiting caller hears the result
        (`_results_for_waiters`, or `_caught_up` when its cancel arrives mid-run); what the
        turn handed back becomes queued turns of this lane, run for nobody after ours."""
        done: asyncio.Future[TurnResult] | None = None
        if blocker.turn_id in self._awaiting:
            done = self._caught_up[blocker.turn_id] = asyncio.get_running_loop().create_future()
        try:
            result = await self._run_started(ticket_of(blocker), cancelled, self.executor_for(blocker.text))
        except BaseException as exc:
            if done is not None and not done.done():
                done.set_exception(exc)
                done.exception()  # retrieved here: its waiter (if any) re-raises it
            raise
        self.requeue_and_run(blocker.turn_id)
        result = attrs.evolve(result, undelivered=(), undelivered_ids=())
        self._results_for_waiters[blocker.turn_id] = result
        if done is not None and not done.done():
            done.set_result(result)

    def _park_dead_turn(self, turn: TurnRecord) -> bool:
        """Park a dead owner's running turn whose open call waits on a durable approval, and
        resume it here; True when it waits on one (parked now, or moved by someone else)."""
        approvals = self.parked.waiting_on(turn) if self.parked is not None else []
        if not approvals:
            return False
        if park_turn(self.ledger, turn, approvals):
            parked = self.ledger.get(turn.turn_id)
            if parked is not None:
                self._resume_parked(parked)
        return True

    def _resume_parked(self, turn: TurnRecord) -> None:
        """Resume a parked turn in this process unless it is resumed already (here, or by its
        live owner): its own, or a dead owner's once claimed (of two claimers one wins)."""
        if self.parked is None or self.closing or self.parked.resuming(turn.turn_id):
            return
        if turn.owner != self.lease.owner:
            if self.lease.is_alive(turn.owner) or not self.ledger.claim_parked(
                    turn, f"claimed by {self.lease.owner}: its owner died while it was parked"):
                return
            claimed = self.ledger.get(turn.turn_id)
            if claimed is None or claimed.state != PARKED:
                return
            turn = claimed
        self.parked.resume(turn).add_done_callback(report_resume_failure)

    def _runs_here(self, turn_id: str) -> bool:
        return any(running.turn_id == turn_id for running in self._running.values())

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
