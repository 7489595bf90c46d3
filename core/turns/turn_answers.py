"""What became of an admitted turn, read from durable state alone (any process, any restart).

A client that retries with its idempotency key, or comes back after the server stopped,
is owed the answer to the message it sent, which is not always the turn it sent it as:

- `completed`: the turn's own reply;
- `merged` (sendMode all): the answer of the turn that took the message in;
- `interrupted` (a crash, or a graceful stop that parked it): the answer of the next turn
  of its lane — the continuation the next start admitted for it, or, when turns were
  already queued behind it, the first of those (recovery admits no continuation then:
  that turn answers the durable conversation, the interrupted message and its note
  included, exactly as after a kill); until there is one, the answer is still owed;
- `parked` (its process died while it waited on a durable approval): still owed, and the
  message names the approval whose answer resumes it; `resumed`: like `interrupted`, the
  answer of the next turn of its lane (the continuation that read the parked call's result);
- `failed`, `stopped`, `cancelled`: that outcome, with the failure note's text;
- `queued`, `running`: not decided yet.
"""

from __future__ import annotations

import attrs

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, REPLY
from atomic_agent.turns.turn_repository import TurnRepository
from atomic_agent.turns.turn_states import (
    CANCELLED,
    COMPLETED,
    CONTINUATION_ORIGIN,
    FAILED,
    INTERRUPTED,
    LIVE_STATES,
    MERGED,
    PARKED,
    RESUMED,
    STOPPED,
    TurnRecord,
)

PENDING = "pending"  # queued or running, or interrupted and not yet continued: the answer is still owed
GONE = "gone"  # no such turn (never admitted, or its session was deleted)
MAX_HOPS = 64  # merged/continued chains are short; a cycle would be a ledger bug, not a reason to hang


@attrs.frozen
class TurnAnswer:
    turn_id: str  # the turn asked about
    outcome: str  # completed | failed | stopped | cancelled | pending | gone
    session_id: str = ""
    answered_by: str = ""  # the turn whose outcome this is (itself, the merging turn, a continuation)
    reply: str = ""
    category: str | None = None
    message: str = ""  # the failure note (failed), or why it is still owed (pending)
    awaits_restart: bool = False  # pending, and only a (re)start's recovery will continue it

    @property
    def settled(self) -> bool:
        return self.outcome not in (PENDING,)


def answer_of(ledger: TurnRepository, store: SessionRepository, turn_id: str) -> TurnAnswer:
    """The outcome that answers `turn_id`'s message (see the module docstring)."""
    asked = turn_id
    for _ in range(MAX_HOPS):
        turn = ledger.get(turn_id)
        if turn is None:
            return TurnAnswer(asked, GONE, answered_by=turn_id)
        if turn.state == PARKED:
            return TurnAnswer(asked, PENDING, turn.session_id, turn.turn_id,
                              message=f"turn {turn.turn_id} is parked, {turn.reason or 'waiting for an approval'}")
        if turn.state in LIVE_STATES:
            return TurnAnswer(asked, PENDING, turn.session_id, turn.turn_id, message=f"turn {turn.turn_id} is {turn.state}")
        if turn.state == MERGED and turn.merged_into:
            turn_id = turn.merged_into
            continue
        if turn.state in (INTERRUPTED, RESUMED):
            continuation = _continuation_after(ledger, turn)
            if continuation is None:
                if turn.state == RESUMED:
                    return TurnAnswer(asked, PENDING, turn.session_id, turn.turn_id,
                                      message=f"turn {turn.turn_id} was {turn.reason}; its answer is still owed")
                return TurnAnswer(asked, PENDING, turn.session_id, turn.turn_id, awaits_restart=True,
                                  message="it was interrupted; the next start of the agent answers it")
            turn_id = continuation.turn_id
            continue
        return _settled(store, asked, turn)
    return TurnAnswer(asked, PENDING, message="the turn's answer could not be followed (too many hops)")


def _continuation_after(ledger: TurnRepository, turn: TurnRecord) -> TurnRecord | None:
    """The turn of the lane that answers the conversation after `turn` was interrupted: the
    first later one that is live or ran (a withdrawn or merged one answered nothing)."""
    for later in ledger.lane(turn.lane):
        if later.admitted_order <= turn.admitted_order:
            continue
        if later.state in LIVE_STATES or later.turn_index is not None or later.origin == CONTINUATION_ORIGIN:
            return later
    return None


def _settled(store: SessionRepository, asked: str, turn: TurnRecord) -> TurnAnswer:
    rows = [e for e in store.entries(turn.session_id) if e.turn_index == turn.turn_index] \
        if turn.turn_index is not None else []
    if turn.state == COMPLETED:
        replies = [e.text for e in rows if e.kind == REPLY]
        return TurnAnswer(asked, COMPLETED, turn.session_id, turn.turn_id, reply=replies[-1] if replies else "")
    notes = [e.text for e in rows if e.kind == FAILURE_NOTE]
    outcome = turn.state if turn.state in (FAILED, STOPPED, CANCELLED) else FAILED
    return TurnAnswer(asked, outcome, turn.session_id, turn.turn_id, category=turn.category,
                      message=notes[-1] if notes else (turn.reason or turn.state))
