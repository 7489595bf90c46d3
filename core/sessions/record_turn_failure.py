"""What a turn leaves behind when it gives up: settled calls and, if it failed, a note.

A failed turn must not leave a call unanswered (the next message would land behind it),
and the next inference should know why the last one produced no answer, so the failure
becomes a durable `failure_note` row the prompt renders. A cancelled turn settles its
calls as cancelled and leaves no note: the user chose to stop it. A turn interrupted by a
graceful stop (parked) leaves a note too: the session is owed an answer, which the next
start gives (owed_answers reads the note).
"""

from __future__ import annotations

import sys

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import settle_abandoned_calls
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TranscriptEntry

NOTE_CHARS = 500
SETTLE_ATTEMPTS = 3  # settling is idempotent, so a write that failed (locked, flaky) is simply tried again


def failure_note_text(message: str, how: str = "failed") -> str:
    text = " ".join(message.split())
    return f"The last turn {how}: {text if len(text) <= NOTE_CHARS else text[:NOTE_CHARS] + '…'}"


def record_turn_failure(store: SessionRepository, session: SessionState, turn_index: int, message: str, *,
                        cancelled: bool = False, interrupted: bool = False) -> None:
    """Settle the turn's open calls and (unless cancelled) append the failure note.

    Never raises: it runs while a turn is already failing, and a second error here must
    not hide the first; a call it could not settle is repaired on the next load."""
    if cancelled:
        status, summary = "cancelled", "cancelled before it finished"
    elif interrupted:
        status, summary = "error", f"not finished: the turn was interrupted before this call returned ({message})"
    else:
        status, summary = "error", f"not finished: the turn failed before this call returned ({message})"
    for attempt in range(SETTLE_ATTEMPTS):
        try:
            settle_abandoned_calls(store, session, turn_index, summary, status)
            break
        except Exception as exc:
            if attempt == SETTLE_ATTEMPTS - 1:
                _warn(session, turn_index, exc)
    if cancelled:
        return
    try:  # not retried: a write that failed after its commit would leave the note twice
        note = failure_note_text(message, "was interrupted" if interrupted else "failed")
        store.append(session, [TranscriptEntry(FAILURE_NOTE, turn_index, text=note)])
    except Exception as exc:
        _warn(session, turn_index, exc)


def _warn(session: SessionState, turn_index: int, exc: Exception) -> None:
    print(f"atomic-agent: could not settle the failed turn {turn_index} of session {session.id}: "
          f"{type(exc).__name__}: {exc}", file=sys.stderr)
