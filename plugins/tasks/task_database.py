"""Open tasks.sqlite through the core storage layer: refuse a corrupt or newer file
untouched, then WAL (synchronous FULL: a task is an acknowledged obligation) + migrations."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_agent.api import Durability, is_lock_error, migrate, open_sqlite, read_schema_state, transaction

from .task_errors import TaskStoreError
from .task_schema import MIGRATIONS

TASKS_FILE = "tasks.sqlite"
DEFAULT_BUSY_TIMEOUT_S = 10.0


def tasks_db_path(state_dir: Path) -> Path:
    return Path(state_dir) / TASKS_FILE


def _check_openable(conn: sqlite3.Connection, path: Path) -> None:
    try:
        schema = read_schema_state(conn)
    except sqlite3.DatabaseError as exc:
        if is_lock_error(exc):
            raise TaskStoreError(f"{path} is locked by another process; try again") from exc
        raise TaskStoreError(f"{path} is not a usable task database ({exc}); it was left untouched. Move it "
                             "aside to start with no tasks, or restore a backup") from exc
    newer = schema.newer_than(MIGRATIONS)
    if newer is not None:
        raise TaskStoreError(f"{path} was written by a newer atomic-agent ({newer}; this build knows version "
                             f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent")


class TaskDatabase:
    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.closed = False

    @classmethod
    def open(cls, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> TaskDatabase:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = open_sqlite(path, Durability.FULL, busy_timeout_s=busy_timeout_s,
                               inspect=lambda c: _check_openable(c, path))
            database = cls(conn, path)
            try:
                migrate(conn, MIGRATIONS)
            except BaseException:
                conn.close()
                raise
        except sqlite3.DatabaseError as exc:
            raise TaskStoreError(f"{path} cannot be used as a task database ({exc}); it was left untouched") from exc
        return database

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so a claim read inside
        it cannot be raced by another process."""
        try:
            with transaction(self.conn) as conn:
                yield conn
        except sqlite3.OperationalError as exc:
            if is_lock_error(exc):
                raise TaskStoreError(f"{self.path} is locked by another process; nothing was written") from exc
            raise

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, params)
        cols = [d[0] for d in cursor.description]
        return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.conn.close()
