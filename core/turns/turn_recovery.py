"""What a restarted runtime owes, settled once: `recover_ledger` on boot.

- A turn left `running` by a dead owner becomes `interrupted`: its generation is bumped in
  the same transaction, so a zombie writer of the old generation is refused from then on,
  and its session gets a durable failure note. It is never run again — its tools may
  already have had their side effects. (Its unanswered tool calls are settled by the
  caller through `settle_interrupted_calls`, which re-runs only durable tools.)
- A steer a dead owner accepted but never delivered becomes a queued turn at the end of
  its lane, deleted from the steering queue in the same transaction: answered exactly once.
- Turns a dead owner admitted but never started stay queued; with `resume` they are
  adopted by this owner and returned in admission order for the caller to run.

Turns and steers of an owner that is still alive (another process on the same state
directory) are left alone. Running it twice changes nothing the second time. A live owner
whose next turn finds its lane held by a dead owner does the same for that one lane without
waiting for a restart (`take_over_dead_turn`, `TurnLedger.adopt`).
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from atomic_agent.sessions.record_turn_failure import failure_note_text
from atomic_agent.sessions.settle_interrupted_calls import settle_as_interrupted
from atomic_agent.sessions.store_errors import SessionNotFoundError
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TURN_FINISHED, TranscriptEntry
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from atomic_agent.turns.turn_states import (CONTINUATION_ORIGIN, INTERRUPTED, QUEUED, RUNNING, QueuedSteer,
                                            TurnRecord, TurnTicket)

INTERRUPTED_REASON = "the process running it stopped before it finished"
ADOPTED_REASON = "adopted after restart"
STEER_ORIGIN_FALLBACK = "cli"


@attrs.frozen
class LedgerRecovery:
    interrupted: tuple[TurnRecord, ...] = ()
    steers_requeued: tuple[str, ...] = ()  # ids of the turns the orphaned steers became
    resumable: tuple[TurnRecord, ...] = ()  # queued turns adopted for running, in admission order
    left_queued: tuple[str, ...] = ()  # queued turns of dead owners left for a host that resumes


def interrupted_note() -> str:
    return failure_note_text(f"{INTERRUPTED_REASON}; it was not run again because its tools may already have "
                             "acted. Check the current state, then ask again if it is still needed")


def recover_ledger(ledger: TurnRepository, queue: SteerRepository, alive: Callable[[str | None], bool],
                   resume: bool) -> LedgerRecovery:
    interrupted = [t for t in ledger.in_state(RUNNING) if not alive(t.owner) and interrupt_turn(ledger, t)]
    requeued = [_steer_to_turn(ledger, queue, steer) for steer in queue.left_by(alive)]
    orphans = [t for t in ledger.in_state(QUEUED) if not alive(t.owner)]
    resumable: list[TurnRecord] = []
    if resume:
        # a live owner waiting behind one of them may have adopted it meanwhile: the CAS says who won
        resumable = [attrs.evolve(t, owner=ledger.owner) for t in orphans if ledger.adopt(t, ADOPTED_REASON)]
    return LedgerRecovery(tuple(interrupted), tuple(t for t in requeued if t), tuple(resumable),
                          () if resume else tuple(t.turn_id for t in orphans))


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
            tickets.append(ledger.requeue_in(handle, steer.session_id, steer.text, origin, lane,
                                             f"steer {steer.steer_id} of turn {steer.turn_id} was never delivered",
                                             owner))
    return tickets
