"""`Runtime.recover`: what a restarted runtime does before it takes new work.

The ledger part (interrupt, requeue orphaned steers, adopt queued turns) is
`recover_ledger`; this adds what needs the runtime: settling the unanswered tool calls of
each interrupted session (only tools marked durable run again, through the approval gate
like any call) and, with `resume`, running the adopted queued turns in lane order and then
answering what the restart owes (owed_answers): one continuation turn per session whose
last durable record is a consumed message, a tool result or a failure note. A continuation
runs the loop on the durable conversation — the model reads the failure note and the
settled results — so nothing non-durable is ever re-run behind anyone's back.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.approval.approval_records import CANCELLED
from atomic_agent.approval.approval_records import PENDING as PENDING_RECORD
from atomic_agent.sessions.record_turn_failure import failure_note_text
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import (
    RunDurable,
    SettleReport,
    settle_as_interrupted,
    settle_interrupted_calls,
)
from atomic_agent.sessions.store_errors import SessionNotFoundError
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TOOL_RESULT, TURN_FINISHED, USER, TranscriptEntry
from atomic_agent.sessions.unanswered_calls import PARKED as PARKED_STATUS
from atomic_agent.sessions.unanswered_calls import unanswered_calls
from atomic_agent.turns.graceful_stop import TurnParkedError
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from atomic_agent.turns.turn_states import (
    CONTINUATION_ORIGIN,
    INTERRUPTED,
    PARKED,
    QUEUED,
    RESUMED,
    RUNNING,
    QueuedSteer,
    TurnRecord,
    TurnTicket,
    ticket_of,
)

# What a restarted runtime owes, settled once: `recover_ledger` on boot.
#
# - A turn left `running` by a dead owner whose open call waits on a durable approval (or
#   question) record becomes `parked` instead, owned by this process: generation bumped the
#   same way, no failure note (nothing failed), a `parked` turn_finished row naming the
#   record; it is resumed from the answer (`recover_after_restart`), then `resumed`.
# - Any other turn left `running` by a dead owner becomes `interrupted`: its generation is bumped in
#   the same transaction, so a zombie writer of the old generation is refused from then on,
#   and its session gets a durable failure note. It is never run again — its tools may
#   already have had their side effects. (Its unanswered tool calls are settled by the
#   caller through `settle_interrupted_calls`, which re-runs only durable tools.)
# - A steer a dead owner accepted but never delivered becomes a queued turn at the end of
#   its lane, deleted from the steering queue in the same transaction: answered exactly once.
# - Turns a dead owner admitted but never started stay queued; with `resume` they are
#   adopted by this owner and returned in admission order for the caller to run.
#
# Turns and steers of an owner that is still alive (another process on the same state
# directory) are left alone. Running it twice changes nothing the second time. A live owner
# whose next turn finds its lane held by a dead owner does the same for that one lane without
# waiting for a restart (`take_over_dead_turn`, `TurnLedger.adopt`).

INTERRUPTED_REASON = "the process running it stopped before it finished"
ADOPTED_REASON = "adopted after restart"
STEER_ORIGIN_FALLBACK = "cli"


@attrs.frozen
class LedgerRecovery:
    interrupted: tuple[TurnRecord, ...] = ()
    parked: tuple[TurnRecord, ...] = ()  # waiting on an approval record: resumed from its answer
    steers_requeued: tuple[str, ...] = ()  # ids of the turns the orphaned steers became
    resumable: tuple[TurnRecord, ...] = ()  # queued turns adopted for running, in admission order
    left_queued: tuple[str, ...] = ()  # queued turns of dead owners left for a host that resumes


def interrupted_note() -> str:
    return failure_note_text(f"{INTERRUPTED_REASON}; it was not run again because its tools may already have "
                             "acted. Check the current state, then ask again if it is still needed")


def parked_reason(approval_ids: list[str]) -> str:
    return (f"waiting for approval {', '.join(approval_ids)}: the process running it stopped while it asked; "
            "the answer from any surface (atomic-agent approvals answer ID) resumes it")


def recover_ledger(ledger: TurnRepository, queue: SteerRepository, alive: Callable[[str | None], bool],
                   resume: bool, waiting_on: Callable[[TurnRecord], list[str]] | None = None) -> LedgerRecovery:
    """`waiting_on(turn)`: the ids of the durable approval records an open call of a dead
    turn waits on (none: it is interrupted, some: it is parked)."""
    interrupted: list[TurnRecord] = []
    parked: list[TurnRecord] = []
    for turn in ledger.in_state(RUNNING):
        if alive(turn.owner):
            continue
        approvals = waiting_on(turn) if waiting_on is not None else []
        if approvals and park_turn(ledger, turn, approvals):
            parked.append(turn)
        elif not approvals and interrupt_turn(ledger, turn):
            interrupted.append(turn)
    requeued = [_steer_to_turn(ledger, queue, steer) for steer in queue.left_by(alive)]
    orphans = [t for t in ledger.in_state(QUEUED) if not alive(t.owner)]
    resumable: list[TurnRecord] = []
    if resume:
        # a live owner waiting behind one of them may have adopted it meanwhile: the CAS says who won
        resumable = [attrs.evolve(t, owner=ledger.owner) for t in orphans if ledger.adopt(t, ADOPTED_REASON)]
    return LedgerRecovery(tuple(interrupted), tuple(parked), tuple(t for t in requeued if t), tuple(resumable),
                          () if resume else tuple(t.turn_id for t in orphans))


def park_turn(ledger: TurnRepository, turn: TurnRecord, approval_ids: list[str]) -> bool:
    """running -> parked (generation bumped) with a `parked` turn_finished row naming the
    records, in one transaction; False when someone finalized it meanwhile."""
    reason = parked_reason(approval_ids)
    with ledger.store.write() as handle:
        if not ledger.park_in(handle, turn, reason):
            return False
        try:
            session = ledger.store.load(turn.session_id)
        except SessionNotFoundError:
            return True
        index = turn.turn_index if turn.turn_index is not None else session.next_turn_index
        ledger.store.append(session, [TranscriptEntry(TURN_FINISHED, index, status=PARKED_STATUS, reason=reason)])
        return True


def interrupt_turn(ledger: TurnRepository, turn: TurnRecord) -> bool:
    """running -> interrupted (generation bumped) with the failure note, in one transaction;
    False when someone finalized it meanwhile (then nothing is owed)."""
    with ledger.store.write() as handle:
        if not ledger.interrupt_in(handle, turn, INTERRUPTED_REASON):
            return False
        try:
            session = ledger.store.load(turn.session_id)
        except SessionNotFoundError:
            return True
        index = turn.turn_index if turn.turn_index is not None else session.next_turn_index
        ledger.store.append(session, [
            TranscriptEntry(FAILURE_NOTE, index, text=interrupted_note()),
            TranscriptEntry(TURN_FINISHED, index, status=INTERRUPTED, reason=INTERRUPTED)])
        return True


def take_over_dead_turn(ledger: TurnRepository, turn: TurnRecord) -> None:
    """A live owner found its lane held by a turn whose owner died: interrupt it as recovery
    would and answer its open calls as interrupted (nothing re-runs: this owner has no gate
    here to run even a durable tool through), so the lane moves on without a restart."""
    if not interrupt_turn(ledger, turn) or turn.turn_index is None:
        return
    try:
        session = ledger.store.load(turn.session_id)
    except SessionNotFoundError:
        return
    settle_as_interrupted(ledger.store, session, turn.turn_index)
    interrupted = ledger.get(turn.turn_id)
    if interrupted is not None:
        ledger.mark_settled(interrupted)


def _steer_to_turn(ledger: TurnRepository, queue: SteerRepository, steer: QueuedSteer) -> str | None:
    # a dead owner admitted it, in effect: leave it unowned so a resuming host adopts it
    turns = steers_to_turns(ledger, queue, [steer], owner=None)
    return turns[0].turn_id if turns else None


def steers_to_turns(ledger: TurnRepository, queue: SteerRepository, steers: list[QueuedSteer],
                    owner: str | None) -> list[TurnTicket]:
    """Turn steers (undelivered, or handed back to nobody) into queued turns at the end of
    their lanes, each deleted from the queue in the same one transaction: answered exactly
    once. A steer another process claimed first, or whose session is gone, is skipped."""
    tickets = []
    with ledger.store.write() as handle:
        for steer in steers:
            target = ledger.get(steer.turn_id)
            # a steer into a continuation is a user message all the same: it must not inherit "no text"
            origin = (target.origin if target is not None and target.origin != CONTINUATION_ORIGIN
                      else STEER_ORIGIN_FALLBACK)
            lane = target.lane if target is not None else steer.session_id
            if not queue.claim(handle, [steer.steer_id]):
                continue  # another process recovered it first
            if not ledger.store.exists(steer.session_id):
                continue  # the session was deleted: its messages went with it
            ticket = ledger.requeue_in(handle, steer.session_id, steer.text, origin, lane,
                                       f"steer {steer.steer_id} of turn {steer.turn_id} was never delivered", owner)
            ledger.rebind_steer_key_in(handle, steer.steer_id, ticket.turn_id)
            tickets.append(ticket)
    return tickets


# What a restarted agent owes: an answer to each session whose last durable record asks for one.
#
# Decided from the durable conversation every time, never from a marker kept elsewhere:
#
# - the last record is found by skipping bookkeeping — a `turn_started` row, and the
#   `turn_finished` row of a turn that failed or was interrupted (its failure note, just
#   before, is the record that counts);
# - a consumed user message, a tool result or a failure note is owed an answer: nobody
#   answered the message, the model never read the result, or the note says the question
#   went unanswered (a failed or interrupted turn is retried this way, with the note as
#   context);
# - a reply is an answer; a `compaction` row is a replacement, not a question; a turn
#   that finished `done` or `cancelled` (a user stop, a withdrawn request) closed itself;
#   an unanswered call is not answerable until it is settled — none of these is owed.
#
# `admit_continuations` admits one continuation turn (origin `recovery`, no user text) per
# owed session whose lane has no live turn, checking and admitting in one transaction: a
# crash before it commits leaves nothing, after it leaves a queued turn that the next
# recovery adopts instead of admitting a second — so each debt is answered once.

OWED_KINDS = (USER, TOOL_RESULT, FAILURE_NOTE)
CLOSED_TURN_STATUSES = ("done", "cancelled")  # a turn_finished row that ends the question


def owes_answer(store: SessionRepository, session_id: str) -> bool:
    """True when the session's last durable record (bookkeeping skipped) is owed an answer."""
    return store.last_answerable_kind(session_id, CLOSED_TURN_STATUSES) in OWED_KINDS


def admit_continuation(ledger: TurnRepository, session_id: str) -> TurnTicket | None:
    """Admit the continuation the session is owed, or None (nothing owed, or a live turn of
    its lane will answer the durable conversation anyway)."""
    with ledger.store.write() as handle:
        if ledger.has_live_turn(session_id) or not owes_answer(ledger.store, session_id):
            return None
        return ledger.admit_in(handle, session_id, "", CONTINUATION_ORIGIN, session_id, uuid.uuid4().hex)


def admit_continuations(ledger: TurnRepository) -> list[TurnTicket]:
    """One continuation per owed session, in session creation order."""
    tickets = []
    for session_id in ledger.store.session_ids():
        try:
            ticket = admit_continuation(ledger, session_id)
        except SessionNotFoundError:
            continue  # deleted since the list was read: nothing is owed to it any more
        if ticket is not None:
            tickets.append(ticket)
    return tickets


if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime
    from atomic_agent.turns.turn_execution import TurnServices
    from atomic_agent.turns.turn_lifecycle import TurnLifecycle


# Settling the calls a crash left open happens between turns: it is submitted to the
# TurnController like a turn, so it never races the session's running turn, and a durable
# call runs again through the same approval gate as any call (invoke_tool).

def durable_runner(services: TurnServices, session: SessionState) -> RunDurable:
    """The `run_durable` settle_interrupted_calls needs: a durable call runs again through the gate."""
    from atomic_agent.agent.invoke_tool import rerun_durable_call

    return partial(rerun_durable_call, registry=services.registry, gate=services.gate, agent=services.config().agent,
                   session=session, state_dir=services.state_dir, services=services.tool_services)


def parked_runner(services: TurnServices, session: SessionState) -> RunDurable:
    """Runs a call that was parked on a durable approval: the gate resumes it from the record."""
    from atomic_agent.agent.invoke_tool import rerun_durable_call

    return partial(rerun_durable_call, registry=services.registry, gate=services.gate, agent=services.config().agent,
                   session=session, state_dir=services.state_dir, services=services.tool_services, parked=True)


def parked_call(services: TurnServices, session_id: str) -> Callable[[TranscriptEntry], bool]:
    """Whether an open call was waiting on a durable approval (answered or not) when its process died."""
    records = services.gate.records

    def parks(call: TranscriptEntry) -> bool:
        if records is None or call.turn_index is None or call.step is None:
            return False
        return records.parks(f"{session_id}/{call.turn_index}/{call.step}/{call.batch_index or 0}")

    return parks


def still_unanswered(services: TurnServices, session_id: str) -> Callable[[TranscriptEntry], bool]:
    """Whether a parked call's approval is still pending after its run: nobody answered
    before the host closed, so the call stays open for the next start."""
    records = services.gate.records

    def waiting(call: TranscriptEntry) -> bool:
        if records is None or call.turn_index is None or call.step is None:
            return False
        key = f"{session_id}/{call.turn_index}/{call.step}/{call.batch_index or 0}"
        return any(r.state == PENDING_RECORD for r in records.for_call(key))

    return waiting


def has_parked_calls(services: TurnServices, session_id: str) -> bool:
    if services.gate.records is None:
        return False
    parks = parked_call(services, session_id)
    try:
        entries = services.sessions.entries(session_id)
    except SessionNotFoundError:
        return False
    return any(parks(c) for c in unanswered_calls(entries))


def approvals_waited_on(services: TurnServices, turn: TurnRecord) -> list[str]:
    """Ids of the durable records the open calls of `turn` wait on (or were answered by and
    never acted on): what parks it instead of interrupting it."""
    records = services.gate.records
    if records is None or turn.turn_index is None:
        return []
    try:
        entries = services.sessions.entries(turn.session_id)
    except SessionNotFoundError:
        return []
    ids: list[str] = []
    for call in unanswered_calls(entries):
        if call.turn_index != turn.turn_index or call.step is None:
            continue
        key = f"{turn.session_id}/{call.turn_index}/{call.step}/{call.batch_index or 0}"
        ids += [r.id for r in records.for_call(key) if r.state != CANCELLED and r.used_at is None]
    return ids


def withdraw_orphaned_records(services: TurnServices, session_id: str | None = None) -> list[str]:
    """Cancel every pending record (of one session, or all) whose call is no longer open in
    its conversation: it was answered some other way (a live owner took the lane over from
    the dead one, the session was deleted), so nothing would act on an answer and no surface
    may keep offering it. A live process's record is never one of them: its call is open
    until its result is written. Their ids."""
    records = services.gate.records
    if records is None:
        return []
    open_calls: dict[str, set[str]] = {}
    withdrawn = []
    for record in records.find((PENDING_RECORD,)):
        if record.call_key is None or (session_id is not None and record.session_id != session_id):
            continue
        if record.session_id not in open_calls:
            try:
                entries = services.sessions.entries(record.session_id)
            except SessionNotFoundError:
                entries = []
            open_calls[record.session_id] = {f"{record.session_id}/{c.turn_index}/{c.step}/{c.batch_index or 0}"
                                             for c in unanswered_calls(entries)}
        if record.call_key not in open_calls[record.session_id] and \
                records.cancel(record.id, "its call was answered without it (its turn moved on)"):
            withdrawn.append(record.id)
    return withdrawn


def resumed_reason(services: TurnServices, turn: TurnRecord) -> str:
    """What the parked turn was resumed from: each record's outcome, who answered, where."""
    records = services.gate.records
    found = [] if records is None else [r for r in records.find() if r.session_id == turn.session_id
                                        and r.turn_id == str(turn.turn_index)]
    if not found:
        return "resumed after restart"
    said = [f"{r.id} {r.decision or r.state}" + (f" by {r.answered_by}" if r.answered_by else "")
            + (f" via {r.surface}" if r.surface else "") for r in sorted(found, key=lambda r: r.created_at)]
    return "resumed from " + "; ".join(said)


async def settle_interrupted(services: TurnServices, session_id: str) -> SettleReport:
    """Settle the calls a crash left open on the session, between turns (TurnController)."""
    async def settle() -> SettleReport:
        session = services.sessions.load(session_id)
        return await settle_interrupted_calls(services.sessions, session, services.registry,
                                              durable_runner(services, session), parked_call(services, session_id),
                                              parked_runner(services, session), still_unanswered(services, session_id))

    return await services.controller.submit(session_id, settle, origin="cli")


@attrs.frozen
class RecoveryReport:
    interrupted: tuple[str, ...] = ()  # turn ids now `interrupted` (never re-run)
    parked: tuple[str, ...] = ()  # turn ids now `parked` (each resumes from its approval's answer)
    steers_requeued: tuple[str, ...] = ()  # ids of queued turns made from undelivered steers
    resumed: tuple[str, ...] = ()  # queued turns submitted again, in lane order
    left_queued: tuple[str, ...] = ()  # queued turns of a dead owner, left for a host that resumes
    settled_calls: int = 0  # unanswered tool calls of interrupted turns given a result
    continued: tuple[str, ...] = ()  # continuation turns admitted for sessions owed an answer
    results: tuple[asyncio.Future[TurnResult], ...] = attrs.field(default=(), eq=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"interrupted": list(self.interrupted), "parked": list(self.parked),
                "steersRequeued": list(self.steers_requeued), "resumed": list(self.resumed), "leftQueued": list(self.left_queued),
                "settledCalls": self.settled_calls, "continued": list(self.continued)}


async def recover_after_restart(runtime: Runtime, resume: bool, sink: ev.EventSink) -> RecoveryReport:
    lifecycle = runtime.lifecycle
    found = recover_ledger(lifecycle.ledger, lifecycle.steers, lifecycle.lease.is_alive, resume,
                           partial(approvals_waited_on, runtime.turn_services))
    withdraw_orphaned_records(runtime.turn_services)  # a record its call can no longer act on is offered nowhere
    settled = 0
    # every interrupted turn not yet marked settled, not only those found now: a crash between
    # interrupting a turn and settling its calls must not leave them owed for ever
    parked: list[asyncio.Future[TurnResult]] = []
    for turn in lifecycle.ledger.in_state(PARKED):
        # this start's parks, and those of a process that died while resuming one (claimed once)
        if turn.owner != lifecycle.ledger.owner and (
                lifecycle.lease.is_alive(turn.owner) or not lifecycle.ledger.claim_parked(turn, ADOPTED_REASON)):
            continue
        mine = lifecycle.ledger.get(turn.turn_id)
        if mine is not None and mine.state == PARKED:
            # tracked by the lifecycle's resumer, so a turn of this process queued behind it waits for it
            settle = partial(_settle_calls, runtime)
            parked.append(lifecycle.parked.resume(mine, resume, sink, settle) if lifecycle.parked is not None
                          else asyncio.ensure_future(resume_parked_turn(runtime.turn_services, lifecycle, mine,
                                                                        resume, sink, settle)))
    for turn in lifecycle.ledger.unsettled_interruptions():
        if has_parked_calls(runtime.turn_services, turn.session_id):
            # waiting on a person: resumed in the background from the answer, so this start
            # (and every surface that may give the answer) is not held up by it
            parked.append(asyncio.ensure_future(_resume_parked(runtime, turn, resume, sink)))
            continue
        count = await _settle_calls(runtime, turn.session_id)
        if count >= 0:
            lifecycle.ledger.mark_settled(turn)
            settled += count
    # after settling, so the decision sees the settled results; idempotent (decided from durable state)
    owed = admit_continuations(lifecycle.ledger) if resume else []
    tickets = [ticket_of(turn) for turn in found.resumable] + owed
    # nobody waits on these: what they hand back is requeued and run, never left to a caller
    results = tuple(asyncio.ensure_future(lifecycle.run_for_nobody(ticket, sink, lifecycle.executor_for))
                    for ticket in tickets) + tuple(parked)
    for future in results:  # a resumed turn reports its own failure; recovery must not crash on it
        future.add_done_callback(_report_failure)
    return RecoveryReport(tuple(t.turn_id for t in found.interrupted), tuple(t.turn_id for t in found.parked),
                          found.steers_requeued,
                          tuple(t.turn_id for t in found.resumable), found.left_queued, settled,
                          tuple(t.turn_id for t in owed), results)


async def _resume_parked(runtime: Runtime, turn: TurnRecord, resume: bool, sink: ev.EventSink) -> TurnResult:
    """Wait for the parked call's answer (from any surface), let the gate act on it, then
    answer the session from the result (approve: the frozen call ran once; deny or expiry:
    the model reads that)."""
    lifecycle = runtime.lifecycle
    if await _settle_calls(runtime, turn.session_id) >= 0 and not has_parked_calls(runtime.turn_services,
                                                                                  turn.session_id):
        lifecycle.ledger.mark_settled(turn)
    ticket = admit_continuation(lifecycle.ledger, turn.session_id) if resume else None
    if ticket is None:
        return TurnResult(turn.session_id, turn.turn_index if turn.turn_index is not None else -1, "done",
                          "parked-settled", turn_id=turn.turn_id)
    return await lifecycle.run_for_nobody(ticket, sink, lifecycle.executor_for)


async def resume_parked_turn(services: TurnServices, lifecycle: TurnLifecycle, turn: TurnRecord, resume: bool,
                             sink: ev.EventSink, settle: Callable[[str], Awaitable[int]]) -> TurnResult:
    """Wait for the answer of a parked turn's records (from any surface, any process), let
    the gate act on it (approve: the frozen call runs once; deny or expiry: the result says
    so), close the turn as `resumed`, then answer the session from that result (none is
    admitted while a later turn of the lane is queued: that turn answers it).

    `settle(session_id)` settles the session's open calls, returning how many (negative: it
    failed): recovery submits it to the TurnController; a turn of this process that waits
    in the lane behind the parked one already holds the controller's lane, so it settles
    directly (`settle_now`)."""
    index = turn.turn_index if turn.turn_index is not None else -1
    if await settle(turn.session_id) < 0:
        return TurnResult(turn.session_id, index, "failed", "parked-unsettled", turn_id=turn.turn_id)
    if approvals_waited_on(services, turn):
        # the host closed before anyone answered: the turn stays parked, its record pending
        return TurnResult(turn.session_id, index, "interrupted", "parked-waiting", turn_id=turn.turn_id)
    withdraw_orphaned_records(services, turn.session_id)
    reason = resumed_reason(services, turn)
    lifecycle.ledger.resume_parked(turn, reason, [TranscriptEntry(TURN_FINISHED, index, status=RESUMED,
                                                                  reason=reason)])
    ticket = admit_continuation(lifecycle.ledger, turn.session_id) if resume else None
    if ticket is None:
        return TurnResult(turn.session_id, index, "done", "parked-settled", turn_id=turn.turn_id)
    return await lifecycle.run_for_nobody(ticket, sink, lifecycle.executor_for)


async def settle_now(services: TurnServices, session_id: str) -> int:
    """Settle the session's open calls here and now, not through the TurnController (its
    caller holds the session's lane there); how many, or -1 when settling failed."""
    try:
        session = services.sessions.load(session_id)
        report = await settle_interrupted_calls(services.sessions, session, services.registry,
                                                durable_runner(services, session), parked_call(services, session_id),
                                                parked_runner(services, session), still_unanswered(services, session_id))
    except Exception as exc:
        print(f"atomic-agent: could not settle the calls of session {session_id}: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return -1
    return report.settled


async def _settle_calls(runtime: Runtime, session_id: str) -> int:
    """Settle the session's open calls through the runtime (only durable tools run again)."""
    try:
        return (await runtime.settle_interrupted(session_id)).settled
    except Exception as exc:  # load repairs what settling could not; recovery goes on
        print(f"atomic-agent: could not settle the interrupted calls of session {session_id}: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return -1


def _report_failure(future: asyncio.Future[TurnResult]) -> None:
    if not future.cancelled() and future.exception() is not None:
        exc = future.exception()
        if isinstance(exc, TurnParkedError):
            return  # a graceful stop left it queued: the next start answers it
        print(f"atomic-agent: a resumed turn failed: {type(exc).__name__}: {exc}", file=sys.stderr)
