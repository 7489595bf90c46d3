"""Lessons: what the agent learned from its own turns (a trigger, the advice, the evidence).

A lesson is born a `candidate`; votes from later turns where it was recalled move it: enough
help makes it `active`, enough harm makes it `deprecated`. A newer lesson can replace it
(`superseded`). Like the profile it is bi-temporal: a row is never deleted or rewritten in
place, `valid_to` closes it and the row stays readable by id (postmortems, evidence walks).

Votes are keyed by (lesson, session, turn): a replayed session votes once. A turn's vote can
be overturned once, when the user's next message corrects that turn (helped becomes hurt).
A lesson distilled from one troubled turn carries its `origin` ("session#turn"), so a
replayed session distils that turn once. The live set
(candidate and active) is bounded by `max_entries`: past it the weakest live lesson (lowest
vote score, then the oldest update, then the lowest id) is deprecated as `overflow`.
"""

from __future__ import annotations

import builtins  # this class has a `list` method: annotations name the builtin as builtins.list
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from atomic_agent.api import store_clock

from .fts_query import build_match_query
from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError
from .note_validation import normalize_tags
from .stop_words import STOP_WORDS

CANDIDATE, ACTIVE, DEPRECATED, SUPERSEDED = "candidate", "active", "deprecated", "superseded"
LESSON_STATES = (CANDIDATE, ACTIVE, DEPRECATED, SUPERSEDED)
LIVE = (CANDIDATE, ACTIVE)
TRIGGER_MAX_CHARS = 200
ADVICE_MAX_CHARS = 600
MAX_EVIDENCE = 20
DEFAULT_MAX_ENTRIES = 200
PROMOTE_AT = 1.0  # vote score at which a candidate becomes active
DEPRECATE_AT = -2.0  # vote score at which a live lesson is deprecated
MAX_VOTE = 5.0  # |vote_score| never exceeds this (a model vote past it saturates: clamp_hit)
SIGNAL_DECAY = 0.95  # vote scores shrink by this factor once per consolidation tick, never per turn
DEPRECATION_AGE_MS = 30 * 24 * 3600 * 1000  # a lesson that never helped retires after this long
MAX_DEPRECATIONS_PER_TICK = 100  # the vote and age sweeps together, per tick
SCORE_BLEND = 0.4  # recall rerank: the weight of votes against outcome counts
RERANK_POOL_MULTIPLIER = 3  # a reranked recall reads k × this many BM25 hits
DUPLICATE_SIMILARITY = 0.6  # word overlap (Jaccard) of trigger and of advice at which two live lessons are one
_WORDS = re.compile(r"\w+")


@attrs.frozen
class Curation:
    """One cold-path pass over the lessons: scores decayed, duplicates merged, then retirements
    (downvoted first)."""

    decayed: int = 0
    downvoted: tuple[int, ...] = ()
    aged_out: tuple[int, ...] = ()
    merged: tuple[tuple[int, int], ...] = ()  # (superseded duplicate, the lesson that replaced it)


def combined_score(relevance: float, vote_score: float, successes: int, failures: int, blend: float) -> float:
    """A recalled lesson's rank: its BM25 relevance (higher is better), plus `blend` of its vote
    score and the rest of its outcome balance (blend 1: votes only, 0: outcomes only)."""
    return relevance + blend * vote_score + (1 - blend) * (successes - failures)


def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORDS.findall(text.lower()) if w not in STOP_WORDS)


def _similar(a: frozenset[str], b: frozenset[str], threshold: float) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= threshold


def _stronger(a: Lesson, b: Lesson) -> bool:
    """Of two duplicates, the one kept: active before candidate, then the higher score and
    the more successes, then the older."""
    return ((a.status == ACTIVE, a.vote_score, a.success_count, -a.id)
            > (b.status == ACTIVE, b.vote_score, b.success_count, -b.id))


@attrs.frozen
class Lesson:
    id: int
    trigger: str
    advice: str
    tags: tuple[str, ...]
    evidence: tuple[int, ...]
    status: str
    success_count: int
    failure_count: int
    vote_score: float
    source: str
    working_dir: str | None
    superseded_by: int | None
    status_reason: str | None
    valid_from: int
    valid_to: int | None
    created_at: int
    updated_at: int
    origin: str | None = None

    @property
    def live(self) -> bool:
        return self.status in LIVE

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "trigger": self.trigger, "advice": self.advice, "tags": list(self.tags),
                "evidence": list(self.evidence), "status": self.status, "successCount": self.success_count,
                "failureCount": self.failure_count, "voteScore": self.vote_score, "source": self.source,
                "workingDir": self.working_dir, "supersededBy": self.superseded_by, "statusReason": self.status_reason,
                "validFrom": store_clock.iso_ms(self.valid_from),
                "validTo": store_clock.iso_ms(self.valid_to) if self.valid_to is not None else None,
                "createdAt": store_clock.iso_ms(self.created_at), "updatedAt": store_clock.iso_ms(self.updated_at), "origin": self.origin}


def _lesson(row: dict[str, Any]) -> Lesson:
    return Lesson(id=row["id"], trigger=row["trigger"], advice=row["advice"], tags=tuple(json.loads(row["tags"])),
                  evidence=tuple(json.loads(row["evidence"])), status=row["status"],
                  success_count=row["success_count"], failure_count=row["failure_count"],
                  vote_score=float(row["vote_score"]), source=row["source"], working_dir=row["working_dir"],
                  superseded_by=row["superseded_by"], status_reason=row["status_reason"],
                  valid_from=row["valid_from"], valid_to=row["valid_to"], created_at=row["created_at"],
                  updated_at=row["updated_at"], origin=row.get("origin"))


def _one_line(value: object, what: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise MemoryValidationError(f"a lesson's {what} must be non-empty text")
    text = " ".join(value.split())
    if len(text) > limit:
        raise MemoryValidationError(f"a lesson's {what} must be at most {limit} characters, got {len(text)}; "
                                    "say it shorter")
    return text


def _evidence(ids: Iterable[object] | None) -> tuple[int, ...]:
    out: list[int] = []
    for raw in ids or ():
        if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
            raise MemoryValidationError(f"a lesson's evidence must be note ids (positive integers), got {raw!r}")
        if raw not in out:
            out.append(raw)
    if len(out) > MAX_EVIDENCE:
        raise MemoryValidationError(f"a lesson cites at most {MAX_EVIDENCE} evidence notes, got {len(out)}")
    return tuple(out)


class LessonStore:
    def __init__(self, database: MemoryDatabase, *, max_entries: int = DEFAULT_MAX_ENTRIES,
                 promote_at: float = PROMOTE_AT, deprecate_at: float = DEPRECATE_AT) -> None:
        self.database = database
        self.max_entries = max_entries
        self.promote_at = promote_at
        self.deprecate_at = deprecate_at

    # -- writes -----------------------------------------------------------------------------
    def create(self, trigger: object, advice: object, tags: Iterable[object] | None = None,
               evidence: Iterable[object] | None = None, *, source: str = "reflection",
               working_dir: str | None = None, origin: str | None = None,
               now: int | None = None) -> tuple[Lesson, tuple[int, ...]]:
        """A new candidate lesson; returns it and the ids the overflow sweep deprecated. With
        an `origin` (the turn it was distilled from) already stored, that lesson is returned
        and nothing is written: a replayed turn distils once."""
        valid = (_one_line(trigger, "trigger", TRIGGER_MAX_CHARS), _one_line(advice, "advice", ADVICE_MAX_CHARS),
                 normalize_tags(tags), _evidence(evidence))
        stamp = store_clock.now_ms() if now is None else now
        swept: tuple[int, ...] = ()
        with self.database.write() as conn:
            known = (conn.execute("SELECT id FROM lessons WHERE origin = ?", [origin]).fetchone()
                     if origin is not None else None)
            if known is not None:
                new_id = int(known[0])
            else:
                cursor = conn.execute(
                    "INSERT INTO lessons (trigger, advice, tags, evidence, status, source, working_dir, origin, "
                    "valid_from, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [valid[0], valid[1], json.dumps(list(valid[2])), json.dumps(list(valid[3])), CANDIDATE, source,
                     working_dir, origin, stamp, stamp, stamp])
                new_id = int(cursor.lastrowid or 0)
                swept = self._sweep_overflow(conn, stamp, keep=new_id)
        lesson = self.get(new_id)
        assert lesson is not None
        return lesson, swept

    def by_origin(self, origin: str) -> Lesson | None:
        """The lesson distilled from the turn `origin` ("session#turn"), if any."""
        rows = self.database.query("SELECT * FROM lessons WHERE origin = ?", [origin])
        return _lesson(rows[0]) if rows else None

    def _set_status(self, conn: Any, lesson_id: int, status: str, reason: str, stamp: int,
                    superseded_by: int | None = None) -> None:
        closing = status in (DEPRECATED, SUPERSEDED)
        conn.execute("UPDATE lessons SET status = ?, status_reason = ?, superseded_by = coalesce(?, superseded_by), "
                     "valid_to = CASE WHEN ? THEN ? ELSE valid_to END, updated_at = ? WHERE id = ?",
                     [status, reason, superseded_by, closing, stamp, stamp, lesson_id])

    def _sweep_overflow(self, conn: Any, stamp: int, keep: int | None = None) -> tuple[int, ...]:
        live = conn.execute(f"SELECT count(*) FROM lessons WHERE status IN {LIVE}").fetchone()[0]
        excess = int(live) - self.max_entries
        if excess <= 0:
            return ()
        rows = conn.execute(f"SELECT id FROM lessons WHERE status IN {LIVE} AND id IS NOT ? "
                            "ORDER BY vote_score ASC, updated_at ASC, id ASC LIMIT ?", [keep, excess]).fetchall()
        for (lesson_id,) in rows:
            self._set_status(conn, lesson_id, DEPRECATED, "overflow", stamp)
        return tuple(int(r[0]) for r in rows)

    def deprecate(self, lesson_id: int, reason: str = "manual", now: int | None = None) -> bool:
        """Close a live lesson (it stays readable by id); False when it is not live."""
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            row = conn.execute("SELECT status FROM lessons WHERE id = ?", [int(lesson_id)]).fetchone()
            if row is None or row[0] not in LIVE:
                return False
            self._set_status(conn, int(lesson_id), DEPRECATED, reason, stamp)
        return True

    def supersede(self, old_id: int, new_id: int, now: int | None = None) -> bool:
        """`new_id` replaces live lesson `old_id` (a merge or a generalisation)."""
        stamp = store_clock.now_ms() if now is None else now
        if old_id == new_id or self.get(new_id) is None:
            return False
        with self.database.write() as conn:
            row = conn.execute("SELECT status FROM lessons WHERE id = ?", [int(old_id)]).fetchone()
            if row is None or row[0] not in LIVE:
                return False
            self._set_status(conn, int(old_id), SUPERSEDED, f"superseded by #{new_id}", stamp, superseded_by=new_id)
        return True

    def vote(self, lesson_id: int, session_id: str, turn_index: int, helped: bool,
             now: int | None = None) -> str:
        """One turn's verdict on a lesson it recalled: applied | duplicate | missing | closed.
        A (session, turn) votes once however often it is replayed; a closed lesson takes no
        votes. Enough help promotes a candidate; enough harm deprecates a live lesson."""
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            row = conn.execute("SELECT status, vote_score FROM lessons WHERE id = ?", [int(lesson_id)]).fetchone()
            if row is None:
                return "missing"
            if row[0] not in LIVE:
                return "closed"
            done = conn.execute("INSERT OR IGNORE INTO lesson_votes (lesson_id, session_id, turn_index, vote, "
                                "created_at) VALUES (?, ?, ?, ?, ?)",
                                [int(lesson_id), session_id, int(turn_index), 1 if helped else -1, stamp])
            if done.rowcount == 0:
                return "duplicate"
            column = "success_count" if helped else "failure_count"
            score = float(row[1]) + (1.0 if helped else -1.0)
            conn.execute(f"UPDATE lessons SET {column} = {column} + 1, vote_score = ?, updated_at = ? WHERE id = ?",
                         [score, stamp, int(lesson_id)])
            if score <= self.deprecate_at:
                self._set_status(conn, int(lesson_id), DEPRECATED, "downvoted", stamp)
            elif row[0] == CANDIDATE and score >= self.promote_at:
                self._set_status(conn, int(lesson_id), ACTIVE, "upvoted", stamp)
        return "applied"

    def overturn(self, session_id: str, turn_index: int, now: int | None = None) -> tuple[int, ...]:
        """The user's next message corrected turn (`session_id`, `turn_index`): every live lesson
        that turn voted for now counts against it (its help vote becomes a harm vote, once: an
        overturned vote is not overturned again). Returns the ids turned."""
        stamp = store_clock.now_ms() if now is None else now
        turned: list[int] = []
        with self.database.write() as conn:
            rows = conn.execute(
                f"SELECT v.lesson_id, l.status, l.vote_score FROM lesson_votes v JOIN lessons l ON l.id = v.lesson_id "
                f"WHERE v.session_id = ? AND v.turn_index = ? AND v.vote = 1 AND l.status IN {LIVE} "
                "ORDER BY v.lesson_id", [session_id, int(turn_index)]).fetchall()
            for lesson_id, _status, score in rows:
                conn.execute("UPDATE lesson_votes SET vote = -1, created_at = ? WHERE lesson_id = ? AND session_id = ? "
                             "AND turn_index = ?", [stamp, lesson_id, session_id, int(turn_index)])
                new_score = float(score) - 2.0
                conn.execute("UPDATE lessons SET success_count = max(success_count - 1, 0), "
                             "failure_count = failure_count + 1, vote_score = ?, updated_at = ? WHERE id = ?",
                             [new_score, stamp, lesson_id])
                if new_score <= self.deprecate_at:
                    self._set_status(conn, int(lesson_id), DEPRECATED, "downvoted", stamp)
                turned.append(int(lesson_id))
        return tuple(turned)

    def model_vote(self, lesson_id: int, session_id: str, turn_index: int, up: bool, *,
                   max_vote: float = MAX_VOTE, now: int | None = None) -> str:
        """The reflection model's vote on a lesson the turn was shown: applied | clamp_hit |
        duplicate | missing | closed. It moves the vote score by one within ±`max_vote` and
        never the outcome counts; a replayed turn votes once; a saturated score records no
        vote (clamp_hit). A candidate the score lifts to `promote_at` becomes active; the
        downvoted retire on the cold path (`curate`), never here."""
        stamp = store_clock.now_ms() if now is None else now
        with self.database.write() as conn:
            row = conn.execute("SELECT status, vote_score FROM lessons WHERE id = ?", [int(lesson_id)]).fetchone()
            if row is None:
                return "missing"
            if row[0] not in LIVE:
                return "closed"
            known = conn.execute("SELECT 1 FROM lesson_model_votes WHERE lesson_id = ? AND session_id = ? AND "
                                 "turn_index = ?", [int(lesson_id), session_id, int(turn_index)]).fetchone()
            if known is not None:
                return "duplicate"
            score = max(-max_vote, min(max_vote, float(row[1]) + (1.0 if up else -1.0)))
            if score == float(row[1]):
                return "clamp_hit"
            conn.execute("INSERT INTO lesson_model_votes (lesson_id, session_id, turn_index, vote, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", [int(lesson_id), session_id, int(turn_index), 1 if up else -1, stamp])
            conn.execute("UPDATE lessons SET vote_score = ?, updated_at = ? WHERE id = ?", [score, stamp, int(lesson_id)])
            if row[0] == CANDIDATE and score >= self.promote_at:
                self._set_status(conn, int(lesson_id), ACTIVE, "upvoted", stamp)
        return "applied"

    def curate(self, *, decay: float = SIGNAL_DECAY, age_ms: int = DEPRECATION_AGE_MS,
               limit: int = MAX_DEPRECATIONS_PER_TICK, since: int | None = None, now: int | None = None) -> Curation:
        """The cold path, once per consolidation tick: every live score decays by `decay` (one
        statement), then live lessons that never helped a turn (success_count = 0) retire:
        first those with a negative score (most negative first, `downvoted`), then those older
        than `age_ms` (`aged_out`), at most `limit` in all. A lesson that helped once survives
        both; only the overflow cap or an operator retires it. Before all that, duplicates
        merge (`merge_duplicates`, new ones since `since` only)."""
        if not 0 < decay <= 1:
            raise MemoryValidationError(f"the vote decay must be in (0, 1], got {decay}")
        stamp = store_clock.now_ms() if now is None else now
        merged = self.merge_duplicates(since=since, now=stamp)
        with self.database.write() as conn:
            decayed = conn.execute(f"UPDATE lessons SET vote_score = vote_score * ? WHERE status IN {LIVE} "
                                   "AND vote_score != 0", [decay]).rowcount
            down = [int(r[0]) for r in conn.execute(
                f"SELECT id FROM lessons WHERE status IN {LIVE} AND success_count = 0 AND vote_score < 0 "
                "ORDER BY vote_score ASC, id ASC LIMIT ?", [limit]).fetchall()]
            for lesson_id in down:
                self._set_status(conn, lesson_id, DEPRECATED, "downvoted", stamp)
            aged = [int(r[0]) for r in conn.execute(
                f"SELECT id FROM lessons WHERE status IN {LIVE} AND success_count = 0 AND created_at <= ? "
                "ORDER BY created_at ASC, id ASC LIMIT ?", [stamp - age_ms, limit - len(down)]).fetchall()]
            for lesson_id in aged:
                self._set_status(conn, lesson_id, DEPRECATED, "aged_out", stamp)
        return Curation(int(decayed or 0), tuple(down), tuple(aged), merged)

    def merge_duplicates(self, threshold: float = DUPLICATE_SIMILARITY, limit: int = 1000,
                         since: int | None = None, now: int | None = None) -> tuple[tuple[int, int], ...]:
        """Live lessons that say the same thing (their triggers' and their advice's content
        words overlap by `threshold` or more) become one: the stronger stays, the other is
        superseded by it (closed, readable by id, `superseded_by` naming the survivor). With
        `since` only pairs with a lesson created after it are compared (the previous tick
        compared the rest); candidates share a trigger word (an inverted index, not all pairs)."""
        stamp = store_clock.now_ms() if now is None else now
        live = [_lesson(r) for r in self.database.query(
            f"SELECT * FROM lessons WHERE status IN {LIVE} ORDER BY id LIMIT ?", [limit])]
        words = {x.id: (_words(x.trigger), _words(x.advice)) for x in live}
        by_id = {x.id: x for x in live}
        index: dict[str, list[int]] = {}
        for x in live:
            for word in words[x.id][0]:
                index.setdefault(word, []).append(x.id)
        gone: set[int] = set()
        merged: list[tuple[int, int]] = []
        for a in live:
            if a.id in gone or (since is not None and a.created_at <= since):
                continue
            others = sorted({i for word in words[a.id][0] for i in index[word]} - {a.id} - gone)
            for other in others:
                b = by_id[other]
                if not (_similar(words[a.id][0], words[b.id][0], threshold)
                        and _similar(words[a.id][1], words[b.id][1], threshold)):
                    continue
                keep, drop = (a, b) if _stronger(a, b) else (b, a)
                with self.database.write() as conn:
                    self._set_status(conn, drop.id, SUPERSEDED, f"duplicate of #{keep.id}", stamp,
                                     superseded_by=keep.id)
                gone.add(drop.id)
                merged.append((drop.id, keep.id))
                if drop.id == a.id:
                    break
        return tuple(merged)

    def turn_votes(self, session_id: str, turn_index: int) -> dict[int, int]:
        """{lesson id: +1 | -1} of the votes one turn cast."""
        rows = self.database.query("SELECT lesson_id, vote FROM lesson_votes WHERE session_id = ? AND turn_index = ?",
                                   [session_id, int(turn_index)])
        return {int(r["lesson_id"]): int(r["vote"]) for r in rows}

    # -- reads ------------------------------------------------------------------------------
    def get(self, lesson_id: int) -> Lesson | None:
        """Any lesson by id, closed ones too."""
        rows = self.database.query("SELECT * FROM lessons WHERE id = ?", [int(lesson_id)])
        return _lesson(rows[0]) if rows else None

    def list(self, status: str | None = None, limit: int = 100) -> builtins.list[Lesson]:
        """Lessons newest first, of one status or all."""
        if status is not None and status not in LESSON_STATES:
            raise MemoryValidationError(f"lesson status must be one of {', '.join(LESSON_STATES)}, got {status!r}")
        where = "WHERE status = ?" if status else ""
        rows = self.database.query(f"SELECT * FROM lessons {where} ORDER BY updated_at DESC, id DESC LIMIT ?",
                                   [status, limit] if status else [limit])
        return [_lesson(r) for r in rows]

    def recall(self, query: str, k: int = 5, *, include_closed: bool = False, score_blend: float | None = None,
               pool_multiplier: int = RERANK_POOL_MULTIPLIER) -> builtins.list[Lesson]:
        """The live lessons whose trigger, advice or tags share words with `query`, best first
        (BM25, ties to the higher vote score); FTS syntax in `query` is only text. With
        `score_blend` (0..1) a wider pool (k × `pool_multiplier`) is reranked by
        `relevance + blend × vote_score + (1 - blend) × (successes - failures)`, so a less
        relevant lesson that earned its votes can come first."""
        match = build_match_query(query or "")
        if match is None or k < 1:
            return []
        states = "" if include_closed else f"AND l.status IN {LIVE}"
        pool = k if score_blend is None else k * max(1, pool_multiplier)
        rows = self.database.query(
            "SELECT l.*, bm25(lessons_fts) AS rank FROM lessons_fts f JOIN lessons l ON l.rowid = f.rowid "
            f"WHERE lessons_fts MATCH ? {states} ORDER BY bm25(lessons_fts), l.vote_score DESC, l.id LIMIT ?",
            [match, pool])
        if score_blend is None:
            return [_lesson(r) for r in rows]
        blend = min(1.0, max(0.0, float(score_blend)))
        ranked = sorted(rows, key=lambda r: -combined_score(-float(r["rank"]), float(r["vote_score"]),
                                                            int(r["success_count"]), int(r["failure_count"]), blend))
        return [_lesson(r) for r in ranked[:k]]

    def missing_evidence(self, lesson: Lesson) -> tuple[int, ...]:
        """The evidence note ids that no longer exist (forgotten or evicted)."""
        if not lesson.evidence:
            return ()
        marks = ", ".join("?" for _ in lesson.evidence)
        present = {r["id"] for r in self.database.query(f"SELECT id FROM memories WHERE id IN ({marks})",
                                                        list(lesson.evidence))}
        return tuple(i for i in lesson.evidence if i not in present)

    def count(self, statuses: Sequence[str] = LIVE) -> int:
        marks = ", ".join("?" for _ in statuses)
        return int(self.database.query(f"SELECT count(*) AS n FROM lessons WHERE status IN ({marks})",
                                       list(statuses))[0]["n"])
