"""Open memory.sqlite: refuse a corrupt or newer file untouched, then WAL + migrations.

Writes go through `write()`, a BEGIN IMMEDIATE transaction: the write lock is taken up
front, and a lock another process holds past the busy timeout becomes a
MemoryDatabaseLockedError instead of a half-done write. Reads never wait on writers (WAL).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from atomic_agent.api import Durability, SqliteStore

from .memory_errors import MemoryDatabaseLockedError, MemoryDatabaseRefusedError
from .memory_schema import MIGRATIONS

MEMORY_FILE = "memory.sqlite"
DEFAULT_BUSY_TIMEOUT_S = 5.0


def memory_db_path(state_dir: Path) -> Path:
    return state_dir / MEMORY_FILE


class MemoryDatabase(SqliteStore):
    """One connection to memory.sqlite, shared by the profile and note stores."""

    migrations = MIGRATIONS
    # notes and facts are re-derivable memory, not acknowledged messages: NORMAL in WAL
    # keeps every commit atomic and skips the per-commit fsync (10k notes/minute and more)
    durability = Durability.NORMAL
    foreign_keys = True
    busy_timeout_s = DEFAULT_BUSY_TIMEOUT_S

    def refuse_locked(self, exc: sqlite3.DatabaseError, *, writing: bool) -> Exception:
        if writing:
            return MemoryDatabaseLockedError(
                f"{self.path} is locked by another process (waited {self.busy_timeout_s:g} s for the "
                "write lock); nothing was written. Close the other process or try again")
        return MemoryDatabaseLockedError(
            f"{self.path} is locked by another process (waited {self.busy_timeout_s:g} s); close the other "
            "atomic-agent process or try again")

    def refuse_unreadable(self, exc: sqlite3.DatabaseError) -> Exception:
        return MemoryDatabaseRefusedError(
            f"{self.path} is not a usable memory database ({exc}); it was left untouched. Move it aside "
            "to start with an empty memory, or restore a backup")

    def refuse_unusable(self, exc: sqlite3.DatabaseError) -> Exception:
        return MemoryDatabaseRefusedError(
            f"{self.path} cannot be used as a memory database ({exc}). Move it aside to start with an "
            "empty memory")

    def refuse_newer(self, newer: str) -> Exception:
        return MemoryDatabaseRefusedError(
            f"{self.path} was written by a newer atomic-agent ({newer}; this build knows version "
            f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent, or point the "
            "state dir elsewhere")
