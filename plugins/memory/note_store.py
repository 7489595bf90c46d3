"""memories + memories_fts: freeform notes with BM25 recall and a hard cap.

The cap is enforced in the same transaction as the insert that crosses it: the lowest vote
score goes first (a downvoted note before any neutral one), then the oldest by (updated_at,
id), and the FTS triggers drop their index entries too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from atomic_agent.api import store_clock

from .fts_query import build_match_query
from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError
from .memory_records import Note, RecallHit, StoreOutcome
from .note_validation import DEFAULT_MAX_CONTENT_CHARS, ValidNote, validate_note
from .query_feedback import QueryFeedback
from .recall_fusion import FusionWeights, blend

DEFAULT_MAX_ENTRIES = 1000
EVICTED_METRIC = "agent.memory.notes.evicted"
# bm25 column weights for (content, tags, context): context is a neighbour's text, a weaker key
DEFAULT_WEIGHTS = (1.0, 1.0, 0.5)
MAX_RECALL_K = 200


@attrs.frozen
class NoteInput:
    """One note for `store_many`; the same fields `store` takes."""

    content: str
    tags: Sequence[str] = ()
    source: str = "tool"
    scope: str = "global"
    working_dir: str | None = None
    session_id: str | None = None
    context: str = ""
    meta: Mapping[str, Any] | None = None


def _note(row: Mapping[str, Any]) -> Note:
    return Note(id=row["id"], content=row["content"], tags=tuple(json.loads(row["tags"] or "[]")),
                source=row["source"], scope=row["scope"], working_dir=row["working_dir"],
                created_at=row["created_at"], updated_at=row["updated_at"], context=row["context"] or "",
                session_id=row["session_id"], meta=json.loads(row["meta"]) if row["meta"] else None)


def _scope_filter(working_dir: str | None, scope: str | None) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if scope is not None:
        clauses.append("m.scope = ?")
        params.append(scope)
    if working_dir is not None:
        clauses.append("(m.scope = 'global' OR m.working_dir = ?)")
        params.append(str(working_dir))
    return "".join(f" AND {c}" for c in clauses), params


class NoteStore:
    """Freeform notes. `metrics` (a MetricsRegistry) is optional; `on_stored(ids)` is told
    about every committed insert (the embedding writer listens there, off the write path)."""

    def __init__(self, database: MemoryDatabase, *, max_entries: int = DEFAULT_MAX_ENTRIES,
                 max_content_chars: int = DEFAULT_MAX_CONTENT_CHARS, metrics: Any = None,
                 weights: tuple[float, float, float] = DEFAULT_WEIGHTS,
                 on_stored: Callable[[Sequence[int]], None] | None = None) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be at least 1, got {max_entries}")
        self.database = database
        self.max_entries = max_entries
        self.max_content_chars = max_content_chars
        self.metrics = metrics
        self.weights = weights
        self.on_stored = on_stored

    # -- writes -----------------------------------------------------------------------------
    def _validate(self, item: NoteInput) -> ValidNote:
        return validate_note(item.content, item.tags, source=item.source, scope=item.scope,
                             working_dir=item.working_dir, session_id=item.session_id, context=item.context,
                             meta=item.meta, max_content_chars=self.max_content_chars)

    def _insert(self, conn: sqlite3.Connection, note: ValidNote, stamp: int) -> int:
        cursor = conn.execute(
            "INSERT INTO memories (content, tags, context, source, scope, working_dir, session_id, meta, "
            "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [note.content, json.dumps(list(note.tags), ensure_ascii=False), note.context, note.source, note.scope,
             note.working_dir, note.session_id, note.meta_json, stamp, stamp])
        return int(cursor.lastrowid or 0)

    def _evict(self, conn: sqlite3.Connection) -> tuple[int, ...]:
        excess = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0]) - self.max_entries
        if excess <= 0:
            return ()
        # a downvoted note goes first, then the oldest (votes from turn outcomes, see recall_votes)
        ids = tuple(r[0] for r in conn.execute("SELECT id FROM memories ORDER BY vote_score ASC, updated_at ASC, id ASC "
                                                "LIMIT ?", [excess]))
        conn.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])
        return ids

    def _count_evicted(self, evicted: Sequence[int]) -> None:
        if evicted and self.metrics is not None:
            self.metrics.inc(EVICTED_METRIC, len(evicted))

    def store(self, content: object, tags: Iterable[object] | None = None, *, source: str = "tool",
              scope: str = "global", working_dir: str | None = None, session_id: str | None = None,
              context: str = "", meta: Mapping[str, Any] | None = None, now: int | None = None) -> StoreOutcome:
        valid = validate_note(content, tags, source=source, scope=scope, working_dir=working_dir,
                              session_id=session_id, context=context, meta=meta,
                              max_content_chars=self.max_content_chars)
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            new_id = self._insert(conn, valid, stamp)
            evicted = self._evict(conn)
        self._count_evicted(evicted)
        self._notify_stored([new_id])
        note = self.get(new_id)
        if note is None:  # only when the clock went back behind every kept note
            raise MemoryValidationError("the note was evicted immediately; raise memoryNotes.maxEntries")
        return StoreOutcome(note, evicted)

    def store_many(self, items: Iterable[NoteInput], now: int | None = None) -> tuple[list[int], tuple[int, ...]]:
        """Validate every item first (all or nothing), then insert them in one transaction.
        Returns (new ids, evicted ids). Ids of new notes that the cap evicted again are omitted."""
        valid = [self._validate(item) for item in items]
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            ids = [self._insert(conn, note, stamp) for note in valid]
            evicted = self._evict(conn)
        self._count_evicted(evicted)
        gone = set(evicted)
        kept = [i for i in ids if i not in gone]
        self._notify_stored(kept)
        return kept, evicted

    def _notify_stored(self, ids: Sequence[int]) -> None:
        if self.on_stored is not None and ids:
            self.on_stored(list(ids))

    def forget(self, note_id: int) -> bool:
        with self.database.write() as conn:
            cursor = conn.execute("DELETE FROM memories WHERE id = ?", [int(note_id)])
        return cursor.rowcount > 0

    # -- reads ------------------------------------------------------------------------------
    def get(self, note_id: int) -> Note | None:
        rows = self.database.query("SELECT * FROM memories WHERE id = ?", [int(note_id)])
        return _note(rows[0]) if rows else None

    def recall(self, query: str, k: int = 5, *, working_dir: str | None = None, scope: str | None = None,
               exclude_ids: Iterable[int] = (), nearest: Mapping[int, float] | None = None,
               fusion: FusionWeights | None = None, candidates: int = 0,
               feedback: QueryFeedback | None = None) -> list[RecallHit]:
        """Top-k notes by BM25 for the content words of `query` (never raises on FTS syntax).

        With `nearest` (note id -> cosine similarity of its vector to the query's, from the
        embedding index) the ranking is hybrid: the top `candidates` BM25 hits and the
        nearest notes are blended with `fusion`, and `score` is minus the blend. With
        `feedback`, that ranking is fused with a second full-text recall whose query gains
        the words its best hits share (see query_feedback), and `score` is minus the fused
        score. Without either this is plain BM25, unchanged."""
        exclude = list(exclude_ids)
        if nearest is not None:
            hits = self._hybrid_recall(query, k, working_dir, scope, exclude, nearest,
                                       fusion or FusionWeights(), max(candidates, k))
        else:
            hits = self._bm25_recall(query, k, working_dir, scope, exclude)
        if feedback is None or not hits:
            return hits
        from .query_feedback import feedback_terms, fuse

        words = feedback_terms(query, [h.note for h in hits], feedback)
        if not words:
            return hits
        second = self._bm25_recall(" ".join([query, *words]), k, working_dir, scope, exclude)
        return [RecallHit(hit.note, -score) for hit, score in fuse(hits, second, feedback.weight, k)]

    def _hybrid_recall(self, query: str, k: int, working_dir: str | None, scope: str | None,
                       exclude_ids: list[int], nearest: Mapping[int, float], fusion: FusionWeights,
                       candidates: int) -> list[RecallHit]:
        if k <= 0:
            return []
        lexical = self._bm25_recall(query, candidates, working_dir, scope, exclude_ids)
        notes = {h.note.id: h.note for h in lexical}
        excluded = set(exclude_ids)
        wanted = [i for i in nearest if i not in notes and i not in excluded]
        notes.update({n.id: n for n in self._get_many(wanted, working_dir, scope)})
        # a vector whose note is gone, or outside the scope asked for, drops out here
        cosine = {i: c for i, c in nearest.items() if i in notes}
        ranked = blend({h.note.id: h.score for h in lexical}, cosine, fusion)
        return [RecallHit(notes[i], -score) for i, score in ranked[:min(k, MAX_RECALL_K)]]

    def _get_many(self, ids: Sequence[int], working_dir: str | None, scope: str | None) -> list[Note]:
        if not ids:
            return []
        where, params = _scope_filter(working_dir, scope)
        rows = self.database.query(f"SELECT m.* FROM memories m WHERE m.id IN ({', '.join('?' * len(ids))}){where}",
                                   [*(int(i) for i in ids), *params])
        return [_note(r) for r in rows]

    def _bm25_recall(self, query: str, k: int, working_dir: str | None, scope: str | None,
                     exclude_ids: Iterable[int]) -> list[RecallHit]:
        match = build_match_query(query or "")
        if match is None or k <= 0:
            return []
        where, params = _scope_filter(working_dir, scope)
        excluded = [int(i) for i in exclude_ids]
        if excluded:
            where += f" AND m.id NOT IN ({', '.join('?' * len(excluded))})"
            params.extend(excluded)
        w_content, w_tags, w_context = self.weights
        sql = ("SELECT m.*, bm25(memories_fts, ?, ?, ?) AS score FROM memories_fts "
               "JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH ?"
               f"{where} ORDER BY score ASC, m.id DESC LIMIT ?")
        try:
            rows = self.database.query(sql, [w_content, w_tags, w_context, match, *params, min(k, MAX_RECALL_K)])
        except sqlite3.OperationalError as exc:
            if "fts5" in str(exc).lower():  # defence in depth: the builder already quotes every term
                return []
            raise
        return [RecallHit(_note(r), float(r["score"])) for r in rows]

    def recent(self, limit: int, *, working_dir: str | None = None, exclude_ids: Iterable[int] = ()) -> list[Note]:
        """The most recently updated notes (the pointer index), newest first."""
        if limit <= 0:
            return []
        where, params = _scope_filter(working_dir, None)
        excluded = [int(i) for i in exclude_ids]
        if excluded:
            where += f" AND m.id NOT IN ({', '.join('?' * len(excluded))})"
            params.extend(excluded)
        # a note folded into a lesson leaves the index (it stays readable by id: get)
        rows = self.database.query(f"SELECT m.* FROM memories m WHERE m.consolidated_into IS NULL{where} "
                                   "ORDER BY m.updated_at DESC, m.id DESC LIMIT ?", [*params, limit])
        return [_note(r) for r in rows]

    def archive_into(self, note_ids: Iterable[int], lesson_id: int) -> int:
        """Mark the notes as folded into lesson `lesson_id` (one statement); returns how many."""
        ids = [int(i) for i in note_ids]
        if not ids:
            return 0
        with self.database.write() as conn:
            cursor = conn.execute(f"UPDATE memories SET consolidated_into = ? WHERE id IN ({', '.join('?' * len(ids))})",
                                  [int(lesson_id), *ids])
        return cursor.rowcount

    def consolidated_into(self, note_id: int) -> int | None:
        row = self.database.conn.execute("SELECT consolidated_into FROM memories WHERE id = ?", [int(note_id)]).fetchone()
        return None if row is None else row[0]

    def unconsolidated_ids(self, created_before: int) -> list[int]:
        """Notes not yet folded into a lesson and written before `created_before` (the cooldown)."""
        return [int(r[0]) for r in self.database.conn.execute(
            "SELECT id FROM memories WHERE consolidated_into IS NULL AND created_at <= ? ORDER BY id", [created_before])]

    def count(self) -> int:
        return int(self.database.conn.execute("SELECT count(*) FROM memories").fetchone()[0])

    def fts_count(self) -> int:
        """Rows in the FTS index (equals `count()` while the triggers keep it in sync)."""
        return int(self.database.conn.execute("SELECT count(*) FROM memories_fts_docsize").fetchone()[0])

    def all_notes(self, limit: int | None = None) -> list[Note]:
        sql = "SELECT * FROM memories ORDER BY id ASC" + (" LIMIT ?" if limit is not None else "")
        return [_note(r) for r in self.database.query(sql, [limit] if limit is not None else [])]
