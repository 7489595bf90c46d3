"""profile_facts, bi-temporal: every change inserts a row and supersedes the active one.

Active rows have `superseded_by IS NULL`; the partial unique index allows one per key.
That index is checked immediately, so a set first points the parent's `superseded_by` at
itself (a sentinel that frees the active slot), inserts the new row, then points the
parent at the new id, all inside one transaction, so the sentinel is never visible.
"""

from __future__ import annotations

import builtins  # these classes have a `list` method: their annotations name the builtin as builtins.list
import json
from collections.abc import Iterable
from typing import Any

import attrs

from atomic_agent.api import store_clock

from .memory_database import MemoryDatabase
from .memory_records import ProfileFact
from .profile_validation import normalize_key, validate_fact

SUPERSEDED_METRIC = "agent.memory.profile.superseded"


@attrs.frozen
class SetOutcome:
    fact: ProfileFact
    changed: bool
    superseded: tuple[int, ...] = ()


def _fact(row: dict[str, Any]) -> ProfileFact:
    return ProfileFact(id=row["id"], key=row["key"], value=row["value"], pinned=bool(row["pinned"]),
                       keywords=tuple(json.loads(row["keywords"] or "[]")), source=row["source"],
                       valid_from=row["valid_from"], superseded_by=row["superseded_by"],
                       supersedes=row["supersedes"], created_at=row["created_at"], updated_at=row["updated_at"],
                       vote_score=float(row.get("vote_score") or 0.0))


class ProfileStore:
    """Durable key/value facts about the user. `metrics` (a MetricsRegistry) is optional."""

    def __init__(self, database: MemoryDatabase, metrics: Any = None) -> None:
        self.database = database
        self.metrics = metrics

    def _active_row(self, key: str) -> dict[str, Any] | None:
        rows = self.database.query("SELECT * FROM profile_facts WHERE key = ? AND superseded_by IS NULL", [key])
        return rows[0] if rows else None

    def set(self, key: object, value: object, *, pinned: object = True, keywords: Iterable[object] | None = None,
            supersedes_key: object = None, source: str = "tool", now: int | None = None) -> ProfileFact:
        """Make `value` the active fact for `key` (history keeps the old one); see `apply`."""
        return self.apply(key, value, pinned=pinned, keywords=keywords, supersedes_key=supersedes_key,
                          source=source, now=now).fact

    def apply(self, key: object, value: object, *, pinned: object = True, keywords: Iterable[object] | None = None,
              supersedes_key: object = None, source: str = "tool", now: int | None = None) -> SetOutcome:
        """`set`, also saying whether anything changed and which rows it superseded.

        Setting exactly the active value, pinning and keywords again changes nothing and
        returns the active row, so repeated reflections cannot grow the history.
        `supersedes_key` also retires the active fact of another key (cross-key change).
        """
        fact = validate_fact(key, value, pinned, keywords, supersedes_key, source)
        stamp = store_clock.now_ms() if now is None else now  # never a model-supplied time
        keywords_json = json.dumps(list(fact.keywords), ensure_ascii=False)
        flipped: list[tuple[str, int]] = []
        with self.database.write() as conn:
            same = self._active_row(fact.key)
            other = self._active_row(fact.supersedes_key) if fact.supersedes_key else None
            if (same is not None and other is None and same["value"] == fact.value
                    and bool(same["pinned"]) == fact.pinned and same["keywords"] == keywords_json):
                return SetOutcome(_fact(same), changed=False)
            parents = [row for row in (same, other) if row is not None]
            for row in parents:
                conn.execute("UPDATE profile_facts SET superseded_by = id, updated_at = ? WHERE id = ?",
                             [stamp, row["id"]])
            back = same["id"] if same is not None else (other["id"] if other is not None else None)
            cursor = conn.execute(
                "INSERT INTO profile_facts (key, value, pinned, keywords, source, valid_from, superseded_by, "
                "supersedes, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                [fact.key, fact.value, int(fact.pinned), keywords_json, fact.source, stamp, back, stamp, stamp])
            new_id = int(cursor.lastrowid or 0)
            for row in parents:
                conn.execute("UPDATE profile_facts SET superseded_by = ? WHERE id = ?", [new_id, row["id"]])
                flipped.append((row["key"], row["id"]))
            created = self.database.query("SELECT * FROM profile_facts WHERE id = ?", [new_id])[0]
        if self.metrics is not None:
            for parent_key, _parent_id in flipped:
                self.metrics.inc(SUPERSEDED_METRIC, key=parent_key)
        return SetOutcome(_fact(created), changed=True, superseded=tuple(i for _k, i in flipped))

    def get(self, key: str) -> ProfileFact | None:
        row = self._active_row(normalize_key(key))
        return _fact(row) if row is not None else None

    def get_by_id(self, fact_id: int) -> ProfileFact | None:
        rows = self.database.query("SELECT * FROM profile_facts WHERE id = ?", [int(fact_id)])
        return _fact(rows[0]) if rows else None

    def list(self) -> list[ProfileFact]:
        """Active facts only: pinned first, then by key (a stable render order)."""
        rows = self.database.query("SELECT * FROM profile_facts WHERE superseded_by IS NULL "
                                   "ORDER BY pinned DESC, key ASC")
        return [_fact(r) for r in rows]

    def history(self, key: str) -> builtins.list[ProfileFact]:
        """Every version of `key`, oldest first; the active one (if any) is last."""
        rows = self.database.query("SELECT * FROM profile_facts WHERE key = ? ORDER BY valid_from ASC, id ASC",
                                   [normalize_key(key)])
        return [_fact(r) for r in rows]

    def remove(self, key: str) -> bool:
        """Delete the active fact only; superseded versions stay so history keeps working."""
        norm = normalize_key(key)
        with self.database.write() as conn:
            cursor = conn.execute("DELETE FROM profile_facts WHERE key = ? AND superseded_by IS NULL", [norm])
        return cursor.rowcount > 0

    def count(self, active_only: bool = True) -> int:
        where = " WHERE superseded_by IS NULL" if active_only else ""
        return int(self.database.conn.execute(f"SELECT count(*) FROM profile_facts{where}").fetchone()[0])

    def all_rows(self) -> builtins.list[ProfileFact]:
        """Every row, active and superseded (for export)."""
        return [_fact(r) for r in self.database.query("SELECT * FROM profile_facts ORDER BY key, valid_from, id")]
