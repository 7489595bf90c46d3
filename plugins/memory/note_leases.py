"""The `consolidating_at` lease on a note: one writer at a time between the neighbour
evolver (which only honours it) and the consolidator (which takes and releases it).

A lease older than `lease_ms` is stale and ignored, so a crashed consolidator never
freezes a row for ever. Times are store-clock milliseconds, never a model's.
"""

from __future__ import annotations

from atomic_agent.api import store_clock

from .memory_database import MemoryDatabase

DEFAULT_LEASE_MS = 60_000


def acquire_lease(database: MemoryDatabase, note_id: int, lease_ms: int = DEFAULT_LEASE_MS,
                  now: int | None = None) -> bool:
    """Stamp the lease when it is free or stale (one atomic statement); True when taken."""
    stamp = store_clock.now_ms() if now is None else now
    with database.write() as conn:
        cursor = conn.execute("UPDATE memories SET consolidating_at = ? WHERE id = ? AND "
                              "(consolidating_at IS NULL OR consolidating_at <= ?)",
                              [stamp, int(note_id), stamp - int(lease_ms)])
    return cursor.rowcount > 0


def release_lease(database: MemoryDatabase, note_id: int) -> None:
    with database.write() as conn:
        conn.execute("UPDATE memories SET consolidating_at = NULL WHERE id = ?", [int(note_id)])


def lease_held(consolidating_at: int | None, lease_ms: int, now: int) -> bool:
    """A fresh lease: stamped, and no older than `lease_ms`."""
    return consolidating_at is not None and now - consolidating_at <= lease_ms


def leased_at(database: MemoryDatabase, note_id: int) -> int | None:
    row = database.conn.execute("SELECT consolidating_at FROM memories WHERE id = ?", [int(note_id)]).fetchone()
    return None if row is None or row[0] is None else int(row[0])
