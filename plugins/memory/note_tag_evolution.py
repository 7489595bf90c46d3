"""Grow a note's tags, never its content: the one write the neighbour evolver may make.

No SQL here touches `content`; `updated_at` moves only when the tags really grew, so a
no-op evolve keeps the FIFO eviction order. A note under a fresh consolidation lease is
left alone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from atomic_agent.api import store_clock

from .memory_database import MemoryDatabase
from .memory_errors import MemoryValidationError
from .note_leases import DEFAULT_LEASE_MS, lease_held
from .note_validation import MAX_TAGS, normalize_tags

APPLIED, LEASE_HELD, NO_CHANGE, MISSING = "applied", "lease_held", "no_change", "missing"


def evolve_tags(database: MemoryDatabase, note_id: int, add_tags: Iterable[str], *,
                lease_ms: int = DEFAULT_LEASE_MS, now: int | None = None) -> str:
    """applied | lease_held | no_change | missing. Invalid tags raise MemoryValidationError
    before anything is read; tags past the note's cap are dropped (existing tags win)."""
    wanted = normalize_tags(list(add_tags))
    stamp = store_clock.now_ms() if now is None else now
    with database.write() as conn:
        row = conn.execute("SELECT tags, consolidating_at FROM memories WHERE id = ?", [int(note_id)]).fetchone()
        if row is None:
            return MISSING
        if lease_held(row[1], lease_ms, stamp):
            return LEASE_HELD
        tags = list(json.loads(row[0] or "[]"))
        for tag in wanted:
            if len(tags) >= MAX_TAGS:
                break
            if tag not in tags:
                tags.append(tag)
        if len(tags) == len(json.loads(row[0] or "[]")):
            return NO_CHANGE
        conn.execute("UPDATE memories SET tags = ?, updated_at = ? WHERE id = ?",
                     [json.dumps(tags, ensure_ascii=False), stamp, int(note_id)])
    return APPLIED


__all__ = ["APPLIED", "LEASE_HELD", "MISSING", "NO_CHANGE", "MemoryValidationError", "evolve_tags"]
