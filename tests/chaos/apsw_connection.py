"""The part of `sqlite3.Connection` that SessionStore, sqlite-utils and the turn ledger use,
over an `apsw.Connection` — so the product's own code (its pragmas, its BEGIN IMMEDIATE /
COMMIT boundaries, its admission SQL) runs unchanged on a VFS that only apsw can register.

Python's sqlite3 cannot reach that VFS: apsw ships its own SQLite library, and a VFS is
registered per library. Only what the callers touch is here; anything else fails loudly
(AttributeError) rather than silently behaving differently.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apsw

DESCRIPTION_NONE = ()  # apsw's description of a statement without result columns


class ApswCursor:
    """A finished statement: rows buffered, description/rowcount/lastrowid as sqlite3 gives them."""

    def __init__(self, conn: apsw.Connection, sql: str, params: Any, many: bool = False) -> None:
        cursor = conn.cursor()
        captured: list[Any] = []

        def trace(cur: apsw.Cursor, _sql: str, _bindings: Any) -> bool:
            # the statement is prepared but not stepped: the only moment apsw can describe a
            # query that returns no rows (sqlite3 always can, and SessionStore.load relies on it)
            captured.append(cur.description)
            return True

        cursor.exec_trace = trace
        before = conn.total_changes()
        if many:
            cursor.executemany(sql, params)
            self._rows: list[tuple[Any, ...]] = []
        else:
            self._rows = list(cursor.execute(sql, params) if params is not None else cursor.execute(sql))
        described = captured[-1] if captured else DESCRIPTION_NONE
        self.description = None if described == DESCRIPTION_NONE else described
        self.rowcount = conn.total_changes() - before
        self.lastrowid = conn.last_insert_rowid()
        self._at = 0

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rest, self._at = self._rows[self._at:], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def close(self) -> None:
        self._rows = []


class ApswConnection:
    """Autocommit like `sqlite3.connect(..., isolation_level=None)`: transactions are explicit."""

    def __init__(self, path: str, vfs: str, timeout_s: float = 5.0) -> None:
        self.raw = apsw.Connection(path, vfs=vfs)
        self.raw.set_busy_timeout(int(timeout_s * 1000))

    @property
    def in_transaction(self) -> bool:
        return not self.raw.get_autocommit()

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None) -> ApswCursor:
        return ApswCursor(self.raw, sql, parameters)

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> ApswCursor:
        return ApswCursor(self.raw, sql, list(seq), many=True)

    def executescript(self, sql: str) -> None:
        self.raw.execute(sql)

    def commit(self) -> None:
        if self.in_transaction:
            self.raw.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close(True)  # force: a connection on a VFS that lost power still lets go of its files

    def __enter__(self) -> ApswConnection:
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        (self.rollback if exc_type is not None else self.commit)()
