"""SqliteStore: the embedded default implementation of the store protocol.

WAL, a busy timeout and `BEGIN IMMEDIATE` everywhere; one writer connection on a dedicated
thread with group commit (see sqlite_writer); reads outside a transaction run synchronously on
a reader connection owned by the calling thread (they take microseconds and never wait for the
writer under WAL). Several stores — in this process or others — may open one file: the
database lock serialises their writers, so every conditional operation stays atomic across
owners.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from atomic_agent.persistence import sqlite_operations as ops
from atomic_agent.persistence.change_notifier import LocalNotifier, Notifier
from atomic_agent.persistence.json_serializer import JsonSerializer, Serializer
from atomic_agent.persistence.key_space import prefix_upper_bound, validate_name, validate_prefix
from atomic_agent.persistence.persistence_errors import StoreClosedError, TransactionMisuseError
from atomic_agent.persistence.sqlite_open import check_header, classify_sqlite_error, connect, prepare_file
from atomic_agent.persistence.sqlite_write_unit import COMMIT, ROLLBACK, WriterStats, WriteUnit
from atomic_agent.persistence.sqlite_writer import SqliteWriter
from atomic_agent.persistence.store_arguments import check_kv_value, check_limit, check_seq
from atomic_agent.persistence.store_clock import Clock, SystemClock
from atomic_agent.persistence.store_records import KeyValue, StreamRecord
from atomic_agent.persistence.transaction_guard import enter_transaction, leave_transaction

T = TypeVar("T")
DEFAULT_BUSY_TIMEOUT_S = 5.0


def _records(stream: str, rows: list[tuple[int, str, float]], decode: Callable[[str], Any]) -> list[StreamRecord]:
    return [StreamRecord(stream, int(seq), decode(body), float(at)) for seq, body, at in rows]


class _Reads:
    """The read operations, over `_run(fn)` which executes fn on the right connection."""

    serializer: Serializer

    async def _run(self, fn: Callable[[Any], T]) -> T:
        raise NotImplementedError

    async def read(self, stream: str, after_seq: int | None = None, limit: int | None = None) -> list[StreamRecord]:
        validate_name(stream, "stream")
        after = check_seq(after_seq, "after_seq") or 0
        limit = check_limit(limit)
        rows = await self._run(lambda c: ops.read(c, stream, after, limit))
        return _records(stream, rows, self.serializer.decode)

    async def last_seq(self, stream: str) -> int:
        validate_name(stream, "stream")
        return await self._run(lambda c: ops.last_seq(c, stream))

    async def get(self, key: str) -> Any | None:
        validate_name(key)
        text = await self._run(lambda c: ops.get(c, key))
        return None if text is None else self.serializer.decode(text)

    async def scan(self, prefix: str = "", limit: int | None = None, after: str | None = None) -> list[KeyValue]:
        prefix = validate_prefix(prefix)
        if after is not None:
            validate_name(after, "after")
        limit = check_limit(limit)
        upper = prefix_upper_bound(prefix) if prefix else None
        rows = await self._run(lambda c: ops.scan(c, prefix, upper, after, limit))
        return [KeyValue(k, self.serializer.decode(v)) for k, v in rows]


class SqliteTransaction(_Reads):
    def __init__(self, store: SqliteStore, unit: WriteUnit) -> None:
        self._store = store
        self._unit = unit
        self.serializer = store.serializer

    async def _run(self, fn: Callable[[Any], T]) -> T:
        if self._unit.finished:
            raise TransactionMisuseError("this transaction has already ended; open a new one")
        self._store._check_open()
        return self._store._writer.execute(self._unit, fn)

    def _encode(self, key: str, value: Any) -> str:
        validate_name(key)
        check_kv_value(value, key)
        return self.serializer.encode(value, f"value for key {key!r}")

    async def append(self, stream: str, record: Any) -> int:
        validate_name(stream, "stream")
        body = self.serializer.encode(record, f"record for stream {stream!r}")
        at = self._store.clock.now()
        seq = await self._run(lambda c: ops.append(c, stream, body, at))
        self._unit.streams.add(stream)
        return seq

    async def drop_through(self, stream: str, seq: int) -> int:
        validate_name(stream, "stream")
        through = check_seq(seq, "seq") or 0
        dropped = await self._run(lambda c: ops.drop_through(c, stream, through))
        if dropped:
            self._unit.streams.add(stream)
        return dropped

    async def put(self, key: str, value: Any) -> None:
        text = self._encode(key, value)
        await self._run(lambda c: ops.put(c, key, text))
        self._unit.keys.add(key)

    async def write_if_absent(self, key: str, value: Any) -> bool:
        text = self._encode(key, value)
        won = await self._run(lambda c: ops.write_if_absent(c, key, text))
        if won:
            self._unit.keys.add(key)
        return won

    async def compare_and_set(self, key: str, expected: Any, new: Any | None) -> bool:
        expected_text = self._encode(key, expected)
        new_text = None if new is None else self._encode(key, new)
        won = await self._run(lambda c: ops.compare_and_set(c, key, expected_text, new_text))
        if won:
            self._unit.keys.add(key)
        return won

    async def claim(self, key: str) -> Any | None:
        validate_name(key)
        text = await self._run(lambda c: ops.claim(c, key))
        if text is None:
            return None
        self._unit.keys.add(key)
        return self.serializer.decode(text)


class _TransactionBlock:
    def __init__(self, store: SqliteStore, durable: bool) -> None:
        self._store = store
        self._durable = durable
        self._unit: WriteUnit | None = None
        self._token: Any = None

    async def __aenter__(self) -> SqliteTransaction:
        store = self._store
        store._check_open()
        unit = WriteUnit(bool(self._durable), asyncio.get_running_loop())
        self._token = enter_transaction(("sqlite", store.identity), unit)
        self._unit = unit
        try:
            store._writer.submit(unit)
            await unit.started
        except BaseException:
            unit.finished = True
            unit.ops.put(ROLLBACK)  # a cancelled wait: the writer rolls the unit back when it gets to it
            leave_transaction(self._token)
            raise
        return SqliteTransaction(store, unit)

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> bool:
        unit = self._unit
        assert unit is not None
        unit.finished = True
        leave_transaction(self._token)
        if exc_type is None:
            unit.ops.put(COMMIT)
            # shielded: a cancelled caller cannot un-commit the group; it just stops waiting
            await asyncio.shield(unit.done)
            return False
        unit.ops.put(ROLLBACK)
        try:
            await asyncio.shield(unit.done)
        except Exception:
            pass  # the body's own exception is the one to report
        return False


class SqliteStore(_Reads):
    """Open with `SqliteStore.open(path)`; close with `await store.close()`."""

    def __init__(self, path: Path, busy_timeout_s: float, clock: Clock, notifier: Notifier,
                 serializer: Serializer, max_page_count: int | None, max_group: int) -> None:
        self.path = path
        self.identity = os.path.realpath(path)
        self.busy_timeout_s = busy_timeout_s
        self.clock = clock
        self.notifier = notifier
        self.serializer = serializer
        self.max_page_count = max_page_count
        self._closed = False
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._writer = SqliteWriter(self._connect_writer, path, busy_timeout_s, notifier.publish, max_group)

    @classmethod
    def open(cls, path: Path | str, *, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, clock: Clock | None = None,
             notifier: Notifier | None = None, serializer: Serializer | None = None,
             max_page_count: int | None = None, max_group: int = 256) -> SqliteStore:
        """Refuse a foreign, corrupt or newer file untouched; otherwise enable WAL, migrate and
        start the writer. `max_page_count` caps the file size (a full-disk simulation in tests)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        check_header(path)
        prepare_file(path, busy_timeout_s)
        store = cls(path, busy_timeout_s, clock or SystemClock(), notifier or LocalNotifier(),
                    serializer or JsonSerializer(), max_page_count, max_group)
        store._writer.start()
        return store

    def _connect_writer(self) -> sqlite3.Connection:
        conn = connect(self.path, self.busy_timeout_s)
        if self.max_page_count is not None:
            conn.execute(f"PRAGMA max_page_count = {int(self.max_page_count)}")
        return conn

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError(f"the store on {self.path} was closed; open it again")

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, self.busy_timeout_s, query_only=True)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    async def _run(self, fn: Callable[[Any], T]) -> T:
        self._check_open()
        try:
            return fn(self._reader())
        except sqlite3.Error as exc:
            raise classify_sqlite_error(exc, self.path, self.busy_timeout_s) from exc

    @property
    def writer_stats(self) -> WriterStats:
        return self._writer.stats

    def transaction(self, durable: bool = True) -> _TransactionBlock:
        return _TransactionBlock(self, durable)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._writer.close)
        self._close_readers()

    def abandon(self) -> None:
        """Drop the store like a crashed process would: everything uncommitted is rolled back,
        every waiter fails with StoreClosedError. For crash tests."""
        self._closed = True
        self._writer.abandon()
        self._close_readers()

    def _close_readers(self) -> None:
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            try:
                conn.close()
            except sqlite3.Error:
                pass
