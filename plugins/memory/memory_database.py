"""Open memory.sqlite: refuse a corrupt or newer file untouched, then WAL + migrations.

Writes go through `write()`, a BEGIN IMMEDIATE transaction: the write lock is taken up
front, and a lock another process holds past the busy timeout becomes a
MemoryDatabaseLockedError instead of a half-done write. Reads never wait on writers (WAL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_agent.api import Durability, is_lock_error, migrate, open_sqlite, read_schema_state, transaction

from .memory_errors import MemoryDatabaseLockedError, MemoryDatabaseRefusedError
from .memory_schema import MIGRATIONS

MEMORY_FILE = "memory.sqlite"
DEFAULT_BUSY_TIMEOUT_S = 5.0


def memory_db_path(state_dir: Path) -> Path:
    return state_dir / MEMORY_FILE


def _check_openable(conn: sqlite3.Connection, path: Path) -> None:
    """Read-only checks: nothing here writes to the file."""
    try:
        schema = read_schema_state(conn)
    except sqlite3.DatabaseError as exc:
        if is_lock_error(exc):
            raise MemoryDatabaseLockedError(
                f"{path} is locked by another process; close it (or wait) and try again") from exc
        raise MemoryDatabaseRefusedError(
            f"{path} is not a usable memory database ({exc}); it was left untouched. Move it aside "
            "to start with an empty memory, or restore a backup") from exc
    newer = schema.newer_than(MIGRATIONS)
    if newer is not None:
        raise MemoryDatabaseRefusedError(
            f"{path} was written by a newer atomic-agent ({newer}; this build knows version "
            f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent, or point the "
            "state dir elsewhere")


class MemoryDatabase:
    """One connection to memory.sqlite, shared by the profile and note stores."""

    def __init__(self, conn: sqlite3.Connection, path: Path, busy_timeout_s: float) -> None:
        self.conn = conn
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.closed = False

    @classmethod
    def open(cls, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> MemoryDatabase:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            # notes and facts are re-derivable memory, not acknowledged messages: NORMAL in WAL
            # keeps every commit atomic and skips the per-commit fsync (10k notes/minute and more)
            conn = open_sqlite(path, Durability.NORMAL, busy_timeout_s=busy_timeout_s, foreign_keys=True,
                               inspect=lambda c: _check_openable(c, path))
            database = cls(conn, path, busy_timeout_s)
            try:
                migrate(conn, MIGRATIONS)
            except BaseException:
                conn.close()
                raise
        except sqlite3.DatabaseError as exc:
            if is_lock_error(exc):
                raise MemoryDatabaseLockedError(
                    f"{path} is locked by another process (waited {busy_timeout_s:g} s); close the other "
                    "atomic-agent process or try again") from exc
            raise MemoryDatabaseRefusedError(
                f"{path} cannot be used as a memory database ({exc}). Move it aside to start with an "
                "empty memory") from exc
        return database

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error); a held lock becomes a clear error."""
        try:
            with transaction(self.conn) as conn:
                yield conn
        except sqlite3.OperationalError as exc:
            if is_lock_error(exc):
                raise MemoryDatabaseLockedError(
                    f"{self.path} is locked by another process (waited {self.busy_timeout_s:g} s for the "
                    "write lock); nothing was written. Close the other process or try again") from exc
            raise

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, params)
        cols = [d[0] for d in cursor.description]
        return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.conn.close()
