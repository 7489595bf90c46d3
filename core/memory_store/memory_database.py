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

from atomic_agent.memory_store.memory_errors import MemoryDatabaseLockedError, MemoryDatabaseRefusedError
from atomic_agent.memory_store.memory_schema import KNOWN_MIGRATIONS, MEMORY_SCHEMA_VERSION

MEMORY_FILE = "memory.sqlite"
DEFAULT_BUSY_TIMEOUT_S = 5.0


def memory_db_path(state_dir: Path) -> Path:
    return state_dir / MEMORY_FILE


def _is_lock_error(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _check_openable(conn: sqlite3.Connection, path: Path) -> None:
    """Read-only checks: nothing here writes to the file."""
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        applied = ({row[0] for row in conn.execute("SELECT name FROM _migrations")}
                   if "_migrations" in tables else set())
    except sqlite3.DatabaseError as exc:
        if _is_lock_error(exc):
            raise MemoryDatabaseLockedError(
                f"{path} is locked by another process; close it (or wait) and try again") from exc
        raise MemoryDatabaseRefusedError(
            f"{path} is not a usable memory database ({exc}); it was left untouched. Move it aside "
            "to start with an empty memory, or restore a backup") from exc
    unknown = sorted(applied - KNOWN_MIGRATIONS)
    if version > MEMORY_SCHEMA_VERSION or unknown:
        detail = f"schema version {version}" + (f", migrations {', '.join(unknown)}" if unknown else "")
        raise MemoryDatabaseRefusedError(
            f"{path} was written by a newer atomic-agent ({detail}; this build knows version "
            f"{MEMORY_SCHEMA_VERSION}); it was left untouched. Upgrade atomic-agent, or point the "
            "state dir elsewhere")


class MemoryDatabase:
    """One connection to memory.sqlite, shared by the profile and note stores."""

    def __init__(self, conn: sqlite3.Connection, path: Path, busy_timeout_s: float) -> None:
        import sqlite_utils

        self.conn = conn
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.db = sqlite_utils.Database(conn)
        self.closed = False

    @classmethod
    def open(cls, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> MemoryDatabase:
        from atomic_agent.memory_store.memory_schema import migrate

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            _check_openable(conn, path)
            conn.execute("PRAGMA journal_mode=WAL")
            # notes and facts are re-derivable memory, not acknowledged messages: NORMAL in WAL
            # keeps every commit atomic and skips the per-commit fsync (10k notes/minute and more)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            database = cls(conn, path, busy_timeout_s)
            migrate(database.db)
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _is_lock_error(exc):
                raise MemoryDatabaseLockedError(
                    f"{path} is locked by another process (waited {busy_timeout_s:g} s); close the other "
                    "atomic-agent process or try again") from exc
            raise MemoryDatabaseRefusedError(
                f"{path} cannot be used as a memory database ({exc}). Move it aside to start with an "
                "empty memory") from exc
        except BaseException:
            conn.close()
            raise
        return database

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error); a held lock becomes a clear error."""
        conn = self.conn
        if conn.in_transaction:  # nested use joins the outer transaction
            yield conn
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if _is_lock_error(exc):
                raise MemoryDatabaseLockedError(
                    f"{self.path} is locked by another process (waited {self.busy_timeout_s:g} s for the "
                    "write lock); nothing was written. Close the other process or try again") from exc
            raise
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            conn.execute("ROLLBACK")
            if _is_lock_error(exc):
                raise MemoryDatabaseLockedError(
                    f"{self.path} is locked by another process; nothing was written. Try again") from exc
            raise

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, params)
        cols = [d[0] for d in cursor.description]
        return [dict(zip(cols, row)) for row in cursor.fetchall()]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.conn.close()
