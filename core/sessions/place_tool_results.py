"""Write missing tool results beside their calls, atomically, even under later rows.

A result belongs right after its batch (the calls and results of one step), not at the
end of the transcript: the prompt, and anyone reading the session, pairs a call with the
answer that follows it. When rows already follow the batch, they are deleted and written
back shifted — all in one transaction, re-read from the store inside it, so a crash leaves
either the old transcript or the settled one.
"""

from __future__ import annotations

from collections.abc import Sequence

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.sessions.unanswered_calls import batch_end_seq, call_key, unanswered_calls
from atomic_agent.storage.store_clock import now_iso


def place_tool_results(store: SessionRepository, session: SessionState, results: Sequence[TranscriptEntry]) -> int:
    """Place each result (keyed by turn, step, batch_index) after its call's batch; returns
    how many were written. Results whose call was answered meanwhile are skipped, so two
    settlers racing on one session never answer a call twice. Reloads `session.entries`."""
    written = 0
    with store.write() as handle:
        if store.guard is not None:  # a fenced view: only a still-running turn may settle its calls
            store.check_fence(handle, store.guard)
        current = store.entries(session.id)  # inside the write lock: the store, not memory, decides
        open_calls = {call_key(c): c for c in unanswered_calls(current)}
        placements: dict[int, list[TranscriptEntry]] = {}
        for result in results:
            call = open_calls.pop(call_key(result), None)
            if call is not None:
                placements.setdefault(batch_end_seq(current, call), []).append(result)
        if placements:
            now = now_iso()
            first = min(placements)
            moved = store.raw_rows(handle, session.id, first)
            store.delete_rows(handle, session.id, after_seq=first)
            seq = first + 1
            for row in [None, *moved]:  # None stands for the rows placed right after `first`
                anchor = first if row is None else row["seq"]
                if row is not None:
                    store.insert_raw_row(handle, row, seq)
                    seq += 1
                for entry in sorted(placements.get(anchor, ()), key=lambda e: e.batch_index or 0):
                    store.insert_entry(handle, session.id, entry, seq, now)
                    seq += 1
                    written += 1
            store.touch(handle, session.id, now)
    session.entries = store.entries(session.id)
    return written
