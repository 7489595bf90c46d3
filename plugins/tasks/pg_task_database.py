"""The tasks' tables in the fleet's PostgreSQL, behind the interface TaskStore uses on
tasks.sqlite (`query`, `write`, `closed`, `close`), so the store's SQL is written once.

The store's `?` placeholders become psycopg's `%s`. A read made inside `write()` runs on
that transaction's connection (as on SQLite, where BEGIN IMMEDIATE serialises writers): its
row locks (`lock_row`, `claim_lock`) hold until the commit. Errors of the database become
TaskStoreError (password scrubbed by the shared database), so commands say what to check."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .pg_task_schema import SCHEMA_OWNER, STEPS
from .task_errors import TaskStoreError


def _pg_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def _rows(cursor: Any) -> list[dict[str, Any]]:
    cols = [d.name for d in cursor.description]
    return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]


class _Transaction:
    """A transaction's connection that takes the store's SQL."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(_pg_sql(sql), params)


class PgTaskDatabase:
    engine = "postgresql"
    # due rows through the partial index; no INDEXED BY (SQLite's planner hint) here
    due_sql = "SELECT id FROM tasks WHERE status = 'pending' AND due_at <= ? ORDER BY due_at LIMIT ?"
    lock_row = " FOR UPDATE"  # a row read to decide a write stays ours until the commit
    claim_lock = " FOR UPDATE SKIP LOCKED"  # a row another scheduler is claiming is not waited for

    def __init__(self, shared: Any) -> None:
        from atomic_agent.api import SessionStoreError

        self.shared = shared
        self.path = shared.shown  # where the tasks live, for messages
        self.closed = False
        self._local = threading.local()
        try:
            shared.ensure_schema(SCHEMA_OWNER, STEPS)
        except SessionStoreError as exc:
            raise TaskStoreError(f"tasks cannot be kept in PostgreSQL: {exc}") from None

    @contextmanager
    def write(self) -> Iterator[_Transaction]:
        from atomic_agent.api import SessionStoreError

        try:
            with self.shared.transaction() as conn:
                self._local.tx = _Transaction(conn)
                try:
                    yield self._local.tx
                finally:
                    self._local.tx = None
        except SessionStoreError as exc:
            raise TaskStoreError(f"{exc} (tasks: nothing was written)") from None

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        from atomic_agent.api import SessionStoreError

        tx = getattr(self._local, "tx", None)
        if tx is not None:
            return _rows(tx.execute(sql, params))
        try:
            with self.shared.connection() as conn:
                return _rows(conn.execute(_pg_sql(sql), params))
        except SessionStoreError as exc:
            raise TaskStoreError(str(exc)) from None

    def close(self) -> None:
        self.closed = True  # the pool is the shared database's; nothing of ours to close
