"""What a restarted agent owes: an answer to each session whose last durable record asks for one.

Decided from the durable conversation every time, never from a marker kept elsewhere:

- the last record is found by skipping bookkeeping — a `turn_started` row, and the
  `turn_finished` row of a turn that failed or was interrupted (its failure note, just
  before, is the record that counts);
- a consumed user message, a tool result or a failure note is owed an answer: nobody
  answered the message, the model never read the result, or the note says the question
  went unanswered (a failed or interrupted turn is retried this way, with the note as
  context);
- a reply is an answer; a `compaction` row is a replacement, not a question; a turn
  that finished `done` or `cancelled` (a user stop, a withdrawn request) closed itself;
  an unanswered call is not answerable until it is settled — none of these is owed.

`admit_continuations` admits one continuation turn (origin `recovery`, no user text) per
owed session whose lane has no live turn, checking and admitting in one transaction: a
crash before it commits leaves nothing, after it leaves a queued turn that the next
recovery adopts instead of admitting a second — so each debt is answered once.
"""

from __future__ import annotations

import uuid

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.store_errors import SessionNotFoundError
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TOOL_RESULT, USER
from atomic_agent.turns.turn_repository import TurnRepository
from atomic_agent.turns.turn_states import CONTINUATION_ORIGIN, TurnTicket

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
