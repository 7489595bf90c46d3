"""memory_links: a typed, directed graph between notes, and its bounded BFS expansion.

Either endpoint's deletion removes the edge (FK cascade, same transaction); a self-loop or
a kind outside LINK_KINDS is refused here and by the table's CHECK. Expansion walks both
directions at each hop, so nobody has to write symmetric edges.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from atomic_agent.api import store_clock

from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError

LINK_KINDS = ("RELATES_TO", "CAUSED_BY", "REFERENCES", "CONTRADICTS", "DUPLICATES", "SUPERSEDES")
MIN_DEPTH, MAX_DEPTH = 1, 3
MAX_EXPANDED = 50


@attrs.frozen
class Link:
    from_id: int
    to_id: int
    kind: str
    weight: float = 1.0
    source: str = "link_generator"
    created_at: int = 0

    def to_json(self) -> dict[str, object]:
        return {"from": self.from_id, "to": self.to_id, "kind": self.kind, "weight": self.weight,
                "source": self.source, "createdAt": store_clock.iso_ms(self.created_at)}


def clamp_depth(depth: int) -> int:
    return max(MIN_DEPTH, min(MAX_DEPTH, int(depth)))


def check_link(from_id: int, to_id: int, kind: str) -> tuple[int, int, str]:
    """The normalized edge, or MemoryValidationError for a self-loop, a bad id or kind."""
    if isinstance(from_id, bool) or isinstance(to_id, bool) or not isinstance(from_id, int) \
            or not isinstance(to_id, int) or from_id <= 0 or to_id <= 0:
        raise MemoryValidationError(f"link endpoints must be note ids, got {from_id!r} -> {to_id!r}")
    if from_id == to_id:
        raise MemoryValidationError(f"a note cannot link to itself (#{from_id})")
    norm = str(kind).strip().upper()
    if norm not in LINK_KINDS:
        raise MemoryValidationError(f"link kind {kind!r} must be one of {', '.join(LINK_KINDS)}")
    return from_id, to_id, norm


class LinkStore:
    def __init__(self, database: MemoryDatabase) -> None:
        self.database = database

    def add(self, from_id: int, to_id: int, kind: str, *, weight: float = 1.0, source: str = "link_generator",
            now: int | None = None) -> bool:
        """Insert one edge; False when it exists already or an endpoint is gone (nothing written)."""
        src, dst, norm = check_link(from_id, to_id, kind)
        stamp = store_clock.now_ms() if now is None else now
        try:
            with self.database.write() as conn:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO memory_links (from_id, to_id, kind, weight, source, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)", [src, dst, norm, float(weight), source, stamp])
        except sqlite3.IntegrityError:  # an endpoint was deleted meanwhile: the FK refuses the edge
            return False
        return cursor.rowcount > 0

    def links_of(self, note_id: int) -> list[Link]:
        rows = self.database.query("SELECT * FROM memory_links WHERE from_id = ? OR to_id = ? "
                                   "ORDER BY created_at, from_id, to_id, kind", [int(note_id), int(note_id)])
        return [_link(r) for r in rows]

    def all_links(self, limit: int | None = None) -> list[Link]:
        sql = "SELECT * FROM memory_links ORDER BY created_at DESC, from_id, to_id, kind"
        rows = self.database.query(sql + (" LIMIT ?" if limit is not None else ""),
                                   [limit] if limit is not None else [])
        return [_link(r) for r in rows]

    def count(self) -> int:
        return int(self.database.conn.execute("SELECT count(*) FROM memory_links").fetchone()[0])

    def expand(self, seeds: Sequence[int], *, depth: int = 1, max_expanded: int = 12,
               kinds: Iterable[str] | None = None) -> list[int]:
        """Ids reachable from `seeds` within `depth` hops (both directions), BFS order, seeds
        excluded, deduplicated, at most `max_expanded`. Heavier edges first within a hop."""
        limit = max(0, min(int(max_expanded), MAX_EXPANDED))
        seen = {int(s) for s in seeds}
        if not seen or limit == 0:
            return []
        kind_list = [k.upper() for k in kinds] if kinds else list(LINK_KINDS)
        marks = ", ".join("?" * len(kind_list))
        found: list[int] = []
        frontier = list(dict.fromkeys(int(s) for s in seeds))
        for _hop in range(clamp_depth(depth)):
            following: list[int] = []
            for node in frontier:
                rows = self.database.conn.execute(
                    f"SELECT to_id AS other, weight FROM memory_links WHERE from_id = ? AND kind IN ({marks}) "
                    f"UNION ALL SELECT from_id AS other, weight FROM memory_links WHERE to_id = ? "
                    f"AND kind IN ({marks}) ORDER BY weight DESC, other ASC",
                    [node, *kind_list, node, *kind_list]).fetchall()
                for other, _weight in rows:
                    if other in seen:
                        continue
                    seen.add(other)
                    found.append(int(other))
                    following.append(int(other))
                    if len(found) >= limit:
                        return found
            if not following:
                break
            frontier = following
        return found


def _link(row: Mapping[str, Any]) -> Link:  # a sqlite row: its values are untyped
    return Link(int(row["from_id"]), int(row["to_id"]), str(row["kind"]), float(row["weight"]),
                str(row["source"]), int(row["created_at"]))
