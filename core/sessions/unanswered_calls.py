"""Find tool calls that still lack their result, and tell a stranded one from an open batch.

A call and its result share (turn_index, step, batch_index). A call is *stranded* when the
conversation went on past its batch (a later user message, reply or another batch), or
when its own turn finished without answering it: nobody will run it any more, so only a
repair can answer it. A call at the tail of the transcript may still belong to a batch
that is running or that recovery will settle. A call whose turn the ledger says is still
running (in this process or another live owner) is never anyone else's to answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from atomic_agent.sessions.transcript_entry import (
    FAILURE_NOTE,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_FINISHED,
    TURN_STARTED,
    TranscriptEntry,
)

CallKey = tuple[int, int | None, int | None]

# rows that record bookkeeping rather than conversation: they do not strand a call
_BOOKKEEPING = frozenset({TURN_STARTED, TURN_FINISHED})
INTERRUPTED = "interrupted"  # the turn_finished status recovery gives a turn a dead process left running
PARKED = "parked"  # ... or that turn, when its open call waits on a durable approval (it resumes from the answer)


def call_key(entry: TranscriptEntry) -> CallKey:
    return (entry.turn_index, entry.step, entry.batch_index)


def unanswered_calls(entries: Sequence[TranscriptEntry]) -> list[TranscriptEntry]:
    """Calls with no result row, in transcript order."""
    answered = Counter(call_key(e) for e in entries if e.kind == TOOL_RESULT)
    out: list[TranscriptEntry] = []
    for entry in entries:
        if entry.kind != TOOL_CALL:
            continue
        key = call_key(entry)
        if answered[key] > 0:
            answered[key] -= 1
        else:
            out.append(entry)
    return out


def _same_batch(entry: TranscriptEntry, call: TranscriptEntry) -> bool:
    return (entry.kind in (TOOL_CALL, TOOL_RESULT) and entry.turn_index == call.turn_index
            and entry.step == call.step)


def batch_end_seq(entries: Sequence[TranscriptEntry], call: TranscriptEntry) -> int:
    """The seq of the last row of the contiguous block of calls/results `call` belongs to."""
    end = call.seq
    started = False
    for entry in entries:
        if entry.seq == call.seq:
            started = True
            continue
        if not started:
            continue
        if not _same_batch(entry, call):
            break
        end = entry.seq
    return end


def is_stranded(entries: Sequence[TranscriptEntry], call: TranscriptEntry) -> bool:
    """True when conversation rows follow the call's batch block, or its turn finished
    without answering it. A turn finished as `interrupted` (a restart cut it off) or
    `parked` (waiting on an approval) is left to recovery, which may still run its durable
    calls again, or the parked call from its answer."""
    end = batch_end_seq(entries, call)
    for e in entries:
        if e.seq <= end:
            continue
        if e.kind == TURN_FINISHED and e.turn_index == call.turn_index and e.status not in (INTERRUPTED, PARKED):
            return True
        if e.kind not in _BOOKKEEPING and not (e.kind == FAILURE_NOTE and e.turn_index == call.turn_index):
            return True
    return False

