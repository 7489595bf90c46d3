"""Votes on recalled notes and shown profile facts (memory v2 phase 7a, beyond lessons).

The curation rules are the lessons' (see lesson_store): a turn that ended in a reply or a
finish votes for what it was shown, a failed turn against it, a cancelled, interrupted or
out-of-steps turn votes nothing; when the user's next message corrects a turn, that turn's
votes for its notes and facts turn into votes against them (once). Each vote moves a row's
`vote_score` by one within ±`max_vote` (a saturated score records no vote: clamp_hit); a
(kind, row, session, turn) votes once however often the session is replayed. Scores decay
once per consolidation tick (one statement per table), never per turn.

What reads the score: note eviction (a downvoted note goes before any neutral one) and the
`### profile` filter (a fact at or below -threshold is hidden, pinned or not).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from atomic_agent.api import store_clock

from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError

NOTE, PROFILE = "note", "profile"
TABLES = {NOTE: "memories", PROFILE: "profile_facts"}
MAX_VOTE = 5.0
FORGOTTEN_BELOW = 0.01  # a decayed score this close to zero is zero again (neutral in the eviction order)
_DECAY = ("UPDATE {table} SET vote_score = CASE WHEN abs(vote_score * ?) < ? THEN 0 ELSE vote_score * ? END "
          "WHERE vote_score != 0")


@attrs.frozen
class Decay:
    notes: int = 0
    profile: int = 0


def _table(kind: str) -> str:
    table = TABLES.get(kind)
    if table is None:
        raise MemoryValidationError(f"a recall vote's kind must be one of {', '.join(TABLES)}, got {kind!r}")
    return table


def _clamp(score: float, max_vote: float) -> float:
    return max(-max_vote, min(max_vote, score))


class RecallVoteStore:
    def __init__(self, database: MemoryDatabase, *, max_vote: float = MAX_VOTE) -> None:
        if not max_vote > 0:
            raise MemoryValidationError(f"the vote clamp must be above 0, got {max_vote}")
        self.database = database
        self.max_vote = float(max_vote)

    def vote(self, kind: str, target_id: int, session_id: str, turn_index: int, helped: bool,
             now: int | None = None) -> str:
        """One turn's verdict on a note or fact it was shown: applied | clamp_hit | duplicate |
        missing. A closed (superseded) profile fact counts as missing."""
        table = _table(kind)
        stamp = store_clock.now_ms() if now is None else now
        alive = " AND superseded_by IS NULL" if kind == PROFILE else ""
        with self.database.write() as conn:
            row = conn.execute(f"SELECT vote_score FROM {table} WHERE id = ?{alive}", [int(target_id)]).fetchone()
            if row is None:
                return "missing"
            known = conn.execute("SELECT 1 FROM recall_votes WHERE kind = ? AND target_id = ? AND session_id = ? "
                                 "AND turn_index = ?", [kind, int(target_id), session_id, int(turn_index)]).fetchone()
            if known is not None:
                return "duplicate"
            score = _clamp(float(row[0]) + (1.0 if helped else -1.0), self.max_vote)
            if score == float(row[0]):
                return "clamp_hit"
            conn.execute("INSERT INTO recall_votes (kind, target_id, session_id, turn_index, vote, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         [kind, int(target_id), session_id, int(turn_index), 1 if helped else -1, stamp])
            conn.execute(f"UPDATE {table} SET vote_score = ? WHERE id = ?", [score, int(target_id)])
        return "applied"

    def overturn(self, session_id: str, turn_index: int, kind: str | None = None,
                 now: int | None = None) -> tuple[tuple[str, int], ...]:
        """The user corrected turn (`session_id`, `turn_index`): its votes for notes and facts
        (of `kind`, or both) become votes against them (-2 each, clamped), once. Returns the
        (kind, id) turned."""
        stamp = store_clock.now_ms() if now is None else now
        kinds = [kind] if kind is not None else list(TABLES)
        for name in kinds:
            _table(name)
        turned: list[tuple[str, int]] = []
        marks = ", ".join("?" for _ in kinds)
        with self.database.write() as conn:
            rows = conn.execute(f"SELECT kind, target_id FROM recall_votes WHERE session_id = ? AND turn_index = ? "
                                f"AND vote = 1 AND kind IN ({marks}) ORDER BY kind, target_id",
                                [session_id, int(turn_index), *kinds]).fetchall()
            for kind, target_id in rows:
                table = _table(kind)
                conn.execute("UPDATE recall_votes SET vote = -1, created_at = ? WHERE kind = ? AND target_id = ? "
                             "AND session_id = ? AND turn_index = ?",
                             [stamp, kind, target_id, session_id, int(turn_index)])
                conn.execute(f"UPDATE {table} SET vote_score = max(?, min(?, vote_score - 2)) WHERE id = ?",
                             [-self.max_vote, self.max_vote, target_id])
                turned.append((str(kind), int(target_id)))
        return tuple(turned)

    def decay(self, factor: float) -> Decay:
        """Shrink every non-zero score by `factor` in (0, 1]: one statement per table (a score
        that falls below FORGOTTEN_BELOW becomes 0). The consolidation tick calls this once;
        nothing per turn does."""
        if not 0 < factor <= 1:
            raise MemoryValidationError(f"the vote decay must be in (0, 1], got {factor}")
        with self.database.write() as conn:
            notes = conn.execute(_DECAY.format(table="memories"), [factor, FORGOTTEN_BELOW, factor]).rowcount
            profile = conn.execute(_DECAY.format(table="profile_facts"), [factor, FORGOTTEN_BELOW, factor]).rowcount
        return Decay(int(notes or 0), int(profile or 0))

    def scores(self, kind: str, ids: Iterable[int]) -> dict[int, float]:
        """{id: vote score} of the rows that exist."""
        wanted = [int(i) for i in ids]
        if not wanted:
            return {}
        marks = ", ".join("?" for _ in wanted)
        rows = self.database.query(f"SELECT id, vote_score FROM {_table(kind)} WHERE id IN ({marks})", wanted)
        return {int(r["id"]): float(r["vote_score"]) for r in rows}

    def turn_votes(self, session_id: str, turn_index: int) -> dict[tuple[str, int], int]:
        """{(kind, id): +1 | -1} of the votes one turn cast."""
        rows = self.database.query("SELECT kind, target_id, vote FROM recall_votes WHERE session_id = ? AND "
                                   "turn_index = ?", [session_id, int(turn_index)])
        return {(str(r["kind"]), int(r["target_id"])): int(r["vote"]) for r in rows}
