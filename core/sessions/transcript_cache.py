"""What a store already read of each session's transcript, so the next read fetches only the
rows appended since (a turn then costs the same at turn 10,000 as at turn 10).

The guard is the session's *rewrite count*: a database trigger (session_schema m005) bumps
`sessions.rewrites` whenever a transcript row is deleted (compaction, a repair that moves
rows, a deleted session) or inserted below a later row, by this process or any other. Rows
are otherwise only appended with a growing seq, so while the count is unchanged the cached
rows are exactly the stored prefix, and `rows with seq > last_seq` is everything new. A
changed count (or an unknown session) means the session is reloaded whole.

Only committed reads are kept: a read made inside a write transaction may be rolled back
with it, so it uses the cache but never updates it.

`TranscriptCache` is the part every backend shares; a store owns one (its fenced views share
it) and gives it, as a `TranscriptSource`, the two reads it makes in its own dialect.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Protocol

import attrs

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TOOL_CALL, TOOL_RESULT, TranscriptEntry

CallKey = tuple[int, "int | None", "int | None"]
CACHED_SESSIONS = 16  # transcripts a store keeps for incremental loads (least recently read dropped first)


@attrs.define
class CachedTranscript:
    """One session's rows as of `rewrites`, and which call keys lack a result (kept as rows
    arrive, so "is any call unanswered?" costs nothing on the everyday load)."""

    rewrites: int
    entries: list[TranscriptEntry] = attrs.field(factory=list)
    _calls: dict[CallKey, int] = attrs.field(factory=dict)  # call rows per key
    _results: dict[CallKey, int] = attrs.field(factory=dict)  # result rows per key
    _short: set[CallKey] = attrs.field(factory=set)  # keys with more calls than results

    @property
    def last_seq(self) -> int:
        return self.entries[-1].seq if self.entries else -1

    def extend(self, rows: Iterable[TranscriptEntry]) -> None:
        for row in rows:
            self.entries.append(row)
            if row.kind not in (TOOL_CALL, TOOL_RESULT):
                continue
            key = (row.turn_index, row.step, row.batch_index)
            counts = self._calls if row.kind == TOOL_CALL else self._results
            counts[key] = counts.get(key, 0) + 1
            if self._calls.get(key, 0) > self._results.get(key, 0):
                self._short.add(key)
            else:
                self._short.discard(key)

    @property
    def has_unanswered_call(self) -> bool:
        return bool(self._short)

    def peek(self, rows: list[TranscriptEntry]) -> tuple[list[TranscriptEntry], bool]:
        """What `extend(rows)` would give — the rows and whether a call lacks its result —
        without changing the cache (costs the new rows, plus one list copy)."""
        calls: dict[CallKey, int] = {}
        results: dict[CallKey, int] = {}
        for row in rows:
            if row.kind in (TOOL_CALL, TOOL_RESULT):
                key = (row.turn_index, row.step, row.batch_index)
                counts = calls if row.kind == TOOL_CALL else results
                counts[key] = counts.get(key, 0) + 1
        touched = calls.keys() | results.keys()
        short = any(self._calls.get(k, 0) + calls.get(k, 0) > self._results.get(k, 0) + results.get(k, 0)
                    for k in touched) or bool(self._short - touched)
        return [*self.entries, *rows], short


class TranscriptSource(Protocol):
    """The reads a store makes for its cache, inside its own read snapshot."""

    def stored_rewrites(self, session_id: str) -> int | None:
        """The session's rewrite count, or None when there is no such session."""
        ...

    def rows_after(self, session_id: str, after_seq: int) -> list[TranscriptEntry]:
        """The session's rows with seq above `after_seq`, in seq order."""
        ...


@attrs.define
class TranscriptCache:
    """The sessions a store read most recently (shared with every fenced view); a bounded
    number, so a serve process that saw many sessions holds no more than these in memory.

    Every method runs inside the caller's read snapshot; `keep` says whether that snapshot is
    its own (False: it joined a transaction that may yet be rolled back, so nothing is kept)."""

    _sessions: OrderedDict[str, CachedTranscript] = attrs.field(factory=OrderedDict)

    def __len__(self) -> int:
        return len(self._sessions)

    def forget(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def read(self, source: TranscriptSource, session_id: str, *,
             keep: bool) -> tuple[list[TranscriptEntry], bool]:
        """(rows, whether some call lacks its result). Only the rows after the cached ones are
        read, unless the session's rewrite count moved (then all of them)."""
        rewrites = source.stored_rewrites(session_id)
        if rewrites is None:  # no such session (any more)
            self.forget(session_id)
            return [], False
        cached = self._sessions.get(session_id)
        if cached is None or cached.rewrites != rewrites:
            cached = CachedTranscript(rewrites)
        fresh = source.rows_after(session_id, cached.last_seq)
        if not keep:
            return cached.peek(fresh)
        cached.extend(fresh)
        self._sessions[session_id] = cached
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > CACHED_SESSIONS:
            self._sessions.popitem(last=False)
        return list(cached.entries), cached.has_unanswered_call

    def catch_up(self, source: TranscriptSource, state: SessionState, *, keep: bool) -> None:
        """Bring `state.entries` up to the stored transcript: only the new rows are appended
        when it holds exactly the cached prefix, otherwise it is replaced by a fresh read."""
        rewrites = source.stored_rewrites(state.id)
        cached = self._sessions.get(state.id)
        held = state.entries
        if (rewrites is not None and cached is not None and cached.rewrites == rewrites
                and len(held) == len(cached.entries) and (held[-1].seq if held else -1) == cached.last_seq):
            # `held` is the cached prefix (same length and last seq, no rewrite since): read past it
            fresh = source.rows_after(state.id, cached.last_seq)
            if keep:
                cached.extend(fresh)
            held.extend(fresh)
            return
        state.entries = self.read(source, state.id, keep=keep)[0]
