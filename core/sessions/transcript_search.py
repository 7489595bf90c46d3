"""Search the user's own past sessions: what was said (user and reply rows), by full text.

The index is sessions.sqlite's `transcript_fts` (migration m006). A query is words, never FTS
syntax: every term is quoted, so `NEAR(`, `*`, `"`, `:` or `OR` in a query are searched as
text and cannot widen the match or raise a syntax error.

A session belongs to a channel, named by the origin of its first turn: `telegram`, `http`
(serve clients and webhooks), or `local` (the CLI, the TUI, the sidecar, the scheduler). A
search is scoped to the channels the caller may read; a session on one channel never reads
another channel's sessions unless the operator says so.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Collection, Iterable, Sequence
from typing import Any

import attrs

LOCAL, HTTP, TELEGRAM = "local", "http", "telegram"
CHANNEL_OF_ORIGIN = {"telegram": TELEGRAM, "http": HTTP, "webhook": HTTP}
MAX_QUERY_TERMS = 16
MAX_QUERY_CHARS = 500
SNIPPET_TOKENS = 16
_TERM = re.compile(r"\w+", re.UNICODE)


class SearchQueryError(ValueError):
    """A query with nothing to search for."""


def channel_of(origin: str | None) -> str:
    return CHANNEL_OF_ORIGIN.get(origin or "", LOCAL)


def search_terms(query: str) -> list[str]:
    """The words every backend searches for: `query`'s first distinct words, lower-cased
    (SearchQueryError when it is not text or has none)."""
    if not isinstance(query, str):
        raise SearchQueryError(f"the search query must be text, got {type(query).__name__}")
    terms = list(dict.fromkeys(t.lower() for t in _TERM.findall(query[:MAX_QUERY_CHARS])))[:MAX_QUERY_TERMS]
    if not terms:
        raise SearchQueryError(f"the search query {query[:60]!r} has no words to search for; give a few words "
                               "that were said in the session you want")
    return terms


def match_expression(query: str) -> str:
    """The FTS5 MATCH text for `query`: its words, each quoted as a literal term, any of them
    matching (bm25 ranks rows with more of them first)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in search_terms(query))


@attrs.frozen
class TranscriptHit:
    """One matching row: which session, where in it, when, and the matched words in context."""

    session_id: str
    seq: int
    turn_index: int
    kind: str
    created_at: str
    snippet: str
    title: str
    channel: str

    def to_json(self) -> dict[str, object]:
        return {"sessionId": self.session_id, "seq": self.seq, "turnIndex": self.turn_index, "kind": self.kind,
                "createdAt": self.created_at, "snippet": self.snippet, "title": self.title, "channel": self.channel}


_FIRST_ORIGIN = ("(select origin from turns u where u.session_id = t.session_id "
                 "order by u.admitted_order limit 1)")


def first_origin(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute("select origin from turns where session_id = ? order by admitted_order limit 1",
                       [session_id]).fetchone()
    return str(row[0]) if row else None


def search_transcripts(conn: sqlite3.Connection, query: str, *, channels: Collection[str] | None = None,
                       exclude_session: str | None = None, limit: int = 10) -> list[TranscriptHit]:
    """The best `limit` rows for `query` (bm25 order), one per turn, in sessions whose channel
    is in `channels` (None: every channel), never from `exclude_session`."""
    match = match_expression(query)
    rows = conn.execute(
        "select t.session_id, t.seq, t.turn_index, t.kind, t.created_at, "
        f"snippet(transcript_fts, 0, '[', ']', '…', {SNIPPET_TOKENS}), coalesce(s.title, ''), {_FIRST_ORIGIN} "
        "from transcript_fts join transcript t on t.rowid = transcript_fts.rowid "
        "join sessions s on s.id = t.session_id "
        "where transcript_fts match ? and t.session_id is not ? order by bm25(transcript_fts) limit ?",
        [match, exclude_session, max(limit, 1) * 8]).fetchall()
    return hits_of(rows, channels=channels, limit=limit)


def hits_of(rows: Iterable[Sequence[Any]], *, channels: Collection[str] | None, limit: int) -> list[TranscriptHit]:
    """The first `limit` of `rows` (best first: session id, seq, turn index, kind, created at,
    snippet, title, first origin), one per turn, in sessions whose channel is in `channels`
    (None: every channel)."""
    hits: list[TranscriptHit] = []
    seen: set[tuple[str, int]] = set()
    for session_id, seq, turn, kind, created, snippet, title, origin in rows:
        channel = channel_of(origin)
        if (channels is not None and channel not in channels) or (session_id, turn) in seen:
            continue
        seen.add((session_id, turn))
        hits.append(TranscriptHit(session_id, seq, turn, kind, created or "", " ".join(str(snippet).split()),
                                  title, channel))
        if len(hits) >= limit:
            break
    return hits
