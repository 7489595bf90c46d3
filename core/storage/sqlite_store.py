"""A plugin's SQLite state file as one object: opened (a file it cannot use is refused
before anything is written to it), migrated, written through `write()` and read through
`query()`.

A store names its file's migrations and durability; what it says when the file cannot be
used is its own (each store raises its own error type, with its own advice), through the
`refuse_*` methods. One of them returning None lets the SQLite error (or, for a newer
schema, NewerSchemaError) through as it is.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Self

from atomic_agent.storage.sqlite_file import Durability, is_lock_error, open_sqlite
from atomic_agent.storage.sqlite_migrations import Migration, NewerSchemaError, migrate, read_schema_state
from atomic_agent.storage.sqlite_transaction import transaction

_OPEN_RETRY_S = 0.05  # between attempts to open a file another process is creating


class SqliteStore:
    """One connection to one state file. Subclasses set `migrations` (and `durability`,
    `foreign_keys`, `busy_timeout_s` when the defaults do not fit)."""

    migrations: ClassVar[Sequence[Migration]] = ()
    durability: ClassVar[Durability] = Durability.FULL
    foreign_keys: ClassVar[bool] = False
    busy_timeout_s: float = 5.0

    # for migration steps, which are handed the connection rather than the store
    transaction = staticmethod(transaction)

    def __init__(self, path: Path, busy_timeout_s: float | None = None) -> None:
        self.path = Path(path)
        if busy_timeout_s is not None:
            self.busy_timeout_s = busy_timeout_s
        self.closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = self._open_and_migrate()
        except sqlite3.DatabaseError as exc:
            refused = self.refuse_locked(exc, writing=False) if is_lock_error(exc) else self.refuse_unusable(exc)
            if refused is None:
                raise
            raise refused from exc

    def _open_and_migrate(self) -> sqlite3.Connection:
        """The migrated connection. Two processes that start together on a new file race to
        switch it to WAL and create its tables, and SQLite answers some of those steps "locked"
        at once, without waiting out the busy timeout; such an open is retried until the busy
        timeout has passed, then the lock error goes to `refuse_locked` as any other."""
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                conn = open_sqlite(self.path, self.durability, busy_timeout_s=self.busy_timeout_s,
                                   foreign_keys=self.foreign_keys, inspect=self._inspect)
            except sqlite3.OperationalError as exc:
                if not is_lock_error(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(_OPEN_RETRY_S)
                continue
            try:
                migrate(conn, self.migrations)
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if not is_lock_error(exc) or time.monotonic() >= deadline:
                    raise
            except BaseException:
                conn.close()
                raise
            time.sleep(_OPEN_RETRY_S)

    @classmethod
    def open(cls, path: Path, busy_timeout_s: float | None = None) -> Self:
        """The store of the file at `path` (the class's `busy_timeout_s` unless given)."""
        return cls(path, busy_timeout_s)

    def _inspect(self, conn: sqlite3.Connection) -> None:
        """Read-only: a damaged or newer file is refused before WAL or a migration touches it."""
        try:
            schema = read_schema_state(conn)
        except sqlite3.DatabaseError as exc:
            refused = self.refuse_locked(exc, writing=False) if is_lock_error(exc) else self.refuse_unreadable(exc)
            if refused is None:
                raise
            raise refused from exc
        newer = schema.newer_than(self.migrations)
        if newer is not None:
            refused = self.refuse_newer(newer)
            if refused is None:
                raise NewerSchemaError(str(self.path), newer, len(self.migrations), schema.writer)
            raise refused

    # -- what this store says when its file cannot be used (None: the error as it is) ---------
    def refuse_locked(self, exc: sqlite3.DatabaseError, *, writing: bool) -> Exception | None:
        """Another process held the lock past the busy timeout (`writing`: in `write()`, so
        nothing was written; else while opening)."""
        return None

    def refuse_unreadable(self, exc: sqlite3.DatabaseError) -> Exception | None:
        """The file is not a database this build can read (checked before anything is written)."""
        return None

    def refuse_unusable(self, exc: sqlite3.DatabaseError) -> Exception | None:
        """Opening or migrating the file failed for another reason."""
        return None

    def refuse_newer(self, newer: str) -> Exception | None:
        """A newer build wrote the file (`newer` says how it shows); it was left untouched."""
        return None

    # -- use -----------------------------------------------------------------------------
    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on error): the write lock is taken up front, so
        what is read inside cannot be raced by another process; a lock held past the busy
        timeout becomes the store's own error (`refuse_locked`)."""
        try:
            with transaction(self.conn) as conn:
                yield conn
        except sqlite3.OperationalError as exc:
            refused = self.refuse_locked(exc, writing=True) if is_lock_error(exc) else None
            if refused is None:
                raise
            raise refused from exc

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        """The rows of one read, each as a dict by column name."""
        cursor = self.conn.execute(sql, params)
        cols = [d[0] for d in cursor.description]
        return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.conn.close()
