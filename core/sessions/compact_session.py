"""Replace a session's history up to a snapshot boundary with one `compaction` row.

The one operation that destroys history, so it is built to come back whole or replaced,
never half-erased:

- the boundary is a seq read from the store when the snapshot is taken, never a count
  of what some process holds in memory;
- the summary is produced outside any transaction (it takes a provider round trip), and
  the commit re-reads the store inside its write lock: if the rows up to the boundary are
  no longer exactly the snapshot's, nothing is replaced;
- one transaction deletes the superseded rows and writes the `compaction` row at the
  boundary's seq, so every row that joined after the snapshot keeps its place untouched;
- a batch still owed a result is never split: the boundary stops before it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from atomic_agent.sessions.session_database import RawRow, SessionRepository
from atomic_agent.sessions.transcript_entry import (
    COMPACTION,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_FINISHED,
    TURN_STARTED,
    TranscriptEntry,
)
from atomic_agent.sessions.unanswered_calls import unanswered_calls
from atomic_agent.storage.store_clock import now_iso

Summarise = Callable[[Sequence[TranscriptEntry]], Awaitable[str]]


class CompactionError(RuntimeError):
    """The compaction did not happen; the history is exactly as it was."""


@attrs.frozen
class CompactionResult:
    session_id: str
    compacted: bool  # False: there was nothing to replace (the provider was not asked)
    boundary_seq: int = -1  # rows with seq <= this were replaced by the compaction row
    replaced_rows: int = 0
    kept_rows: int = 0  # rows after the boundary, including any that joined during the summary
    summary: str = ""


@attrs.frozen
class CompactionSnapshot:
    session_id: str
    boundary_seq: int
    entries: tuple[TranscriptEntry, ...]  # the rows the summary replaces
    rows: tuple[Any, ...]  # their raw columns, to prove at commit time nothing changed


def fingerprint(rows: Sequence[RawRow]) -> list[tuple[Any, ...]]:
    """A comparable copy of raw rows (to prove a snapshot is still what the store holds)."""
    return [tuple(sorted(row.items())) for row in rows]


def _boundary(entries: Sequence[TranscriptEntry]) -> int:
    """The last seq that may be replaced: everything, or up to the batch still owed a result."""
    owed = unanswered_calls(entries)
    if not owed:
        return entries[-1].seq
    first = owed[0]
    batch_start = min(e.seq for e in entries if e.kind in (TOOL_CALL, TOOL_RESULT)
                      and e.turn_index == first.turn_index and e.step == first.step)
    return batch_start - 1


def take_snapshot(store: SessionRepository, session_id: str) -> CompactionSnapshot | None:
    """What a compaction would replace now, or None when there is nothing worth replacing."""
    with store.write() as handle:  # one consistent read of the rows and their raw columns
        entries = store.load(session_id).entries  # load repairs a stranded call first
        rows = store.raw_rows(handle, session_id, -1)
    if not entries:
        return None
    boundary = _boundary(entries)
    replaced = tuple(e for e in entries if e.seq <= boundary)
    if not any(e.kind not in (TURN_STARTED, TURN_FINISHED, COMPACTION) for e in replaced):
        return None  # only bookkeeping or an earlier summary: a new summary would say nothing new
    return CompactionSnapshot(session_id, boundary, replaced,
                              tuple(fingerprint([r for r in rows if r["seq"] <= boundary])))


def commit_compaction(store: SessionRepository, snapshot: CompactionSnapshot, summary: str) -> CompactionResult:
    sid, boundary = snapshot.session_id, snapshot.boundary_seq
    with store.write() as handle:
        current = store.raw_rows(handle, sid, -1)  # inside the write lock: the store decides what is kept
        superseded = [r for r in current if r["seq"] <= boundary]
        if tuple(fingerprint(superseded)) != snapshot.rows:
            raise CompactionError(f"session {sid} changed below the compaction boundary while the summary was "
                                  "written (another compaction or a repair); nothing was replaced, try again")
        store.delete_rows(handle, sid, upto_seq=boundary)
        last_turn = max(e.turn_index for e in snapshot.entries)
        note = TranscriptEntry(COMPACTION, last_turn, text=summary,
                               details={"replacedRows": len(superseded), "boundarySeq": boundary})
        now = now_iso()
        store.insert_entry(handle, sid, note, boundary, now)  # at the boundary: later rows keep their seqs and order
        store.touch(handle, sid, now)
    return CompactionResult(sid, True, boundary, len(superseded), len(current) - len(superseded), summary)


async def compact_session(store: SessionRepository, session_id: str, summarise: Summarise) -> CompactionResult:
    """Snapshot, ask `summarise` for the replacement text, commit; see the module docstring.

    Raises CompactionError (history untouched) when the summary cannot be had or the
    snapshot went stale."""
    snapshot = take_snapshot(store, session_id)
    if snapshot is None:
        return CompactionResult(session_id, False)
    try:
        summary = (await summarise(snapshot.entries)).strip()
    except CompactionError:
        raise
    except Exception as exc:
        raise CompactionError(f"compaction of session {session_id} failed: the provider could not summarise the "
                              f"conversation ({type(exc).__name__}: {exc}); the history is unchanged") from exc
    if not summary:
        raise CompactionError(f"compaction of session {session_id} failed: the provider returned an empty summary; "
                              "the history is unchanged")
    return commit_compaction(store, snapshot, summary)
