"""A plugin's tables in the fleet's PostgreSQL behind the interface a SqliteStore offers
(`query`, `write`, `closed`, `close`), so a plugin's store writes its SQL once for both
engines (postgresql_contract.QmarkEngine).

The store's `?` placeholders become psycopg's `%s` (a literal `%` is doubled). A read made
inside `write()` on the same thread runs on that transaction's connection (as on SQLite,
where BEGIN IMMEDIATE serialises writers): its row locks (`lock_row`, `skip_locked`) hold
until the commit. The shared database's SessionStoreError (password already scrubbed)
becomes the plugin's own error type, so its commands say what to check.

ReadOnlyQmarkEngine is the same interface on `read_only()`'s connection, for `doctor` and
`status`: no schema applied, no write taken (SharedDatabase.read_only_qmark)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .shared_database import SharedDatabase


def pg_sql(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


def _rows(cursor: Any) -> list[dict[str, Any]]:
    cols = [d.name for d in cursor.description]
    return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]


class QmarkTransaction:
    """A transaction's connection that takes `?` SQL."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self.conn.execute(pg_sql(sql), params)


class QmarkEngine:
    engine = "postgresql"
    lock_row = " FOR UPDATE"  # a row read to decide a write stays ours until the commit
    skip_locked = " FOR UPDATE SKIP LOCKED"  # a row another process is claiming is not waited for

    def __init__(self, shared: SharedDatabase, owner: str, refuse: Callable[[str], Exception]) -> None:
        self.shared = shared
        self.owner = owner
        self.refuse = refuse
        self.path = shared.shown  # where the records live, for messages
        self.closed = False
        self._local = threading.local()

    @contextmanager
    def write(self) -> Iterator[QmarkTransaction]:
        from atomic_agent.api import SessionStoreError

        try:
            with self.shared.transaction() as conn:
                self._local.tx = QmarkTransaction(conn)
                try:
                    yield self._local.tx
                finally:
                    self._local.tx = None
        except SessionStoreError as exc:
            raise self.refuse(f"{exc} ({self.owner}: nothing was written)") from None

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        from atomic_agent.api import SessionStoreError

        tx = getattr(self._local, "tx", None)
        if tx is not None:
            return _rows(tx.execute(sql, params))
        try:
            with self.shared.connection() as conn:
                return _rows(conn.execute(pg_sql(sql), params))
        except SessionStoreError as exc:
            raise self.refuse(str(exc)) from None

    def close(self) -> None:
        self.closed = True  # the pool is the shared database's; nothing of ours to close


class ReadOnlyQmarkEngine:
    """`?` SQL on one READ ONLY transaction's connection, which applies no schema: reads only."""

    engine = "postgresql"
    lock_row = QmarkEngine.lock_row  # the store's SQL is one text (a write, where these apply, is refused)
    skip_locked = QmarkEngine.skip_locked

    def __init__(self, shared: SharedDatabase, conn: Any, owner: str, refuse: Callable[[str], Exception]) -> None:
        self.shared = shared
        self.conn = conn
        self.owner = owner
        self.refuse = refuse
        self.path = shared.shown
        self.closed = False

    def write(self) -> AbstractContextManager[QmarkTransaction]:
        raise self.refuse(f"{self.owner}: {self.path} is open read-only here (doctor, status look without "
                          "writing): nothing was written")

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        import psycopg

        from .pg_backend import unavailable

        if self.closed:
            raise self.refuse(f"{self.owner}: the read-only look at {self.path} has ended")
        try:
            return _rows(self.conn.execute(pg_sql(sql), params))
        except psycopg.errors.ReadOnlySqlTransaction as exc:
            raise self.refuse(f"{self.owner}: {self.path} is open read-only here: {exc}; nothing was written") \
                from None
        except psycopg.Error as exc:
            raise self.refuse(str(unavailable(self.shared.backend.kit, self.shared.backend.url, exc))) from None

    def close(self) -> None:
        self.closed = True  # the connection is read_only()'s, closed when its block ends
