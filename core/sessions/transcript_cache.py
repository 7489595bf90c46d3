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
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from atomic_agent.sessions.transcript_entry import TOOL_CALL, TOOL_RESULT, TranscriptEntry

CallKey = tuple[int, "int | None", "int | None"]


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
