"""MemoryStore: the reference implementation of the store protocol, in process memory.

It exists to prove the conformance suite is implementation-neutral, and as a fast store for
unit tests. Handles opened on one `MemoryStorage` behave like connections to one file: one
transaction at a time across all of them (and across threads), reads outside a transaction see
committed state only, and a transaction's writes live in an overlay until it commits. Nothing
survives the process.
"""

from __future__ import annotations

import asyncio
import bisect
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from atomic_agent.persistence.change_notifier import LocalNotifier, Notifier
from atomic_agent.persistence.json_serializer import JsonSerializer, Serializer
from atomic_agent.persistence.key_space import prefix_upper_bound, validate_name, validate_prefix
from atomic_agent.persistence.persistence_errors import StoreClosedError, TransactionMisuseError
from atomic_agent.persistence.store_arguments import check_kv_value, check_limit, check_seq
from atomic_agent.persistence.store_clock import Clock, SystemClock
from atomic_agent.persistence.store_records import ChangeSet, KeyValue, StreamRecord
from atomic_agent.persistence.transaction_guard import enter_transaction, leave_transaction

_Row = tuple[int, str, float]  # seq, encoded value, written_at


class MemoryStorage:
    """The shared state several MemoryStore handles open, like one database file."""

    def __init__(self) -> None:
        self.state_lock = threading.Lock()  # short sections: reading or applying a commit
        self.writer_lock = threading.Lock()  # held for a whole transaction
        self.records: dict[str, list[_Row]] = {}
        self.last_seq: dict[str, int] = {}
        self.kv: dict[str, str] = {}
        self.sorted_keys: list[str] = []


def _scan_rows(sorted_keys: list[str], kv: dict[str, str], overlay: dict[str, str | None], prefix: str,
               after: str | None, limit: int | None) -> list[tuple[str, str]]:
    start = prefix if after is None or after < prefix else after
    bound = prefix_upper_bound(prefix) if prefix else None
    lo = bisect.bisect_left(sorted_keys, start)
    hi = len(sorted_keys) if bound is None else bisect.bisect_left(sorted_keys, bound)
    keys = set(sorted_keys[lo:hi])
    keys.update(k for k in overlay if k >= start and (bound is None or k < bound))
    rows: list[tuple[str, str]] = []
    for key in sorted(keys):
        if after is not None and key <= after:
            continue
        text = overlay[key] if key in overlay else kv.get(key)
        if text is None:
            continue
        rows.append((key, text))
        if limit is not None and len(rows) >= limit:
            break
    return rows


async def _acquire(lock: threading.Lock) -> None:
    """Take a threading lock without blocking the event loop; a cancelled wait gives the lock
    back as soon as the helper thread gets it."""
    if lock.acquire(blocking=False):
        return
    future = asyncio.get_running_loop().run_in_executor(None, lock.acquire)
    try:
        await asyncio.shield(future)
    except asyncio.CancelledError:
        future.add_done_callback(lambda _f: lock.release())
        raise


class MemoryTransaction:
    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._storage = store.storage
        self._kv: dict[str, str | None] = {}  # None = deleted in this transaction
        self._appended: dict[str, list[_Row]] = {}
        self._seqs: dict[str, int] = {}
        self._dropped: dict[str, int] = {}
        self.finished = False

    def _live(self) -> None:
        if self.finished:
            raise TransactionMisuseError("this transaction has already ended; open a new one")
        self._store._check_open()

    def _text(self, key: str) -> str | None:
        return self._kv[key] if key in self._kv else self._storage.kv.get(key)

    def _last_seq(self, stream: str) -> int:
        return self._seqs.get(stream, self._storage.last_seq.get(stream, 0))

    async def append(self, stream: str, record: Any) -> int:
        self._live()
        validate_name(stream, "stream")
        text = self._store.serializer.encode(record, f"record for stream {stream!r}")
        seq = self._last_seq(stream) + 1
        self._seqs[stream] = seq
        self._appended.setdefault(stream, []).append((seq, text, self._store.clock.now()))
        return seq

    async def read(self, stream: str, after_seq: int | None = None, limit: int | None = None) -> list[StreamRecord]:
        self._live()
        validate_name(stream, "stream")
        after = check_seq(after_seq, "after_seq") or 0
        limit = check_limit(limit)
        floor = max(after, self._dropped.get(stream, 0))
        rows = [r for r in self._storage.records.get(stream, []) if r[0] > floor]
        rows += [r for r in self._appended.get(stream, []) if r[0] > floor]
        rows = rows if limit is None else rows[:limit]
        decode = self._store.serializer.decode
        return [StreamRecord(stream, seq, decode(text), at) for seq, text, at in rows]

    async def last_seq(self, stream: str) -> int:
        self._live()
        return self._last_seq(validate_name(stream, "stream"))

    async def drop_through(self, stream: str, seq: int) -> int:
        self._live()
        validate_name(stream, "stream")
        through = check_seq(seq, "seq") or 0
        floor = self._dropped.get(stream, 0)
        if through <= floor:
            return 0
        gone = sum(1 for r in self._storage.records.get(stream, []) if floor < r[0] <= through)
        kept = []
        for row in self._appended.get(stream, []):
            if floor < row[0] <= through:
                gone += 1
            else:
                kept.append(row)
        self._appended[stream] = kept
        self._dropped[stream] = through
        return gone

    async def get(self, key: str) -> Any | None:
        self._live()
        text = self._text(validate_name(key))
        return None if text is None else self._store.serializer.decode(text)

    async def scan(self, prefix: str = "", limit: int | None = None, after: str | None = None) -> list[KeyValue]:
        self._live()
        prefix = validate_prefix(prefix)
        if after is not None:
            validate_name(after, "after")
        rows = _scan_rows(self._storage.sorted_keys, self._storage.kv, self._kv, prefix, after, check_limit(limit))
        decode = self._store.serializer.decode
        return [KeyValue(k, decode(t)) for k, t in rows]

    def _encode(self, key: str, value: Any) -> str:
        validate_name(key)
        check_kv_value(value, key)
        return self._store.serializer.encode(value, f"value for key {key!r}")

    async def put(self, key: str, value: Any) -> None:
        self._live()
        self._kv[key] = self._encode(key, value)

    async def write_if_absent(self, key: str, value: Any) -> bool:
        self._live()
        text = self._encode(key, value)
        if self._text(key) is not None:
            return False
        self._kv[key] = text
        return True

    async def compare_and_set(self, key: str, expected: Any, new: Any | None) -> bool:
        self._live()
        expected_text = self._encode(key, expected)
        new_text = None if new is None else self._encode(key, new)
        if self._text(key) != expected_text:
            return False
        self._kv[key] = new_text
        return True

    async def claim(self, key: str) -> Any | None:
        self._live()
        text = self._text(validate_name(key))
        if text is None:
            return None
        self._kv[key] = None
        return self._store.serializer.decode(text)

    def _commit(self) -> ChangeSet:
        storage = self._storage
        with storage.state_lock:
            for stream, through in self._dropped.items():
                storage.records[stream] = [r for r in storage.records.get(stream, []) if r[0] > through]
            for stream, rows in self._appended.items():
                storage.records.setdefault(stream, []).extend(rows)
            storage.last_seq.update(self._seqs)
            for key, text in self._kv.items():
                present = key in storage.kv
                if text is None:
                    if present:
                        del storage.kv[key]
                        storage.sorted_keys.pop(bisect.bisect_left(storage.sorted_keys, key))
                else:
                    storage.kv[key] = text
                    if not present:
                        bisect.insort(storage.sorted_keys, key)
        return ChangeSet(frozenset(self._appended) | frozenset(self._dropped), frozenset(self._kv))


class MemoryStore:
    """A handle on a MemoryStorage; `MemoryStore()` makes a private one."""

    def __init__(self, storage: MemoryStorage | None = None, *, clock: Clock | None = None,
                 notifier: Notifier | None = None, serializer: Serializer | None = None) -> None:
        self.storage = storage if storage is not None else MemoryStorage()
        self.clock: Clock = clock or SystemClock()
        self.notifier: Notifier = notifier or LocalNotifier()
        self.serializer: Serializer = serializer or JsonSerializer()
        self.closed = False

    def _check_open(self) -> None:
        if self.closed:
            raise StoreClosedError("this store was closed; open a new handle on its storage")

    @asynccontextmanager
    async def transaction(self, durable: bool = True) -> AsyncIterator[MemoryTransaction]:
        del durable  # memory is never durable past the process; the flag is accepted for the protocol
        self._check_open()
        tx = MemoryTransaction(self)
        token = enter_transaction(("memory", id(self.storage)), tx)
        try:
            await _acquire(self.storage.writer_lock)
        except BaseException:
            tx.finished = True
            leave_transaction(token)
            raise
        try:
            try:
                yield tx
            finally:
                tx.finished = True
            self._check_open()
            changes = tx._commit()
        finally:
            self.storage.writer_lock.release()
            leave_transaction(token)
        self.notifier.publish(changes)

    async def read(self, stream: str, after_seq: int | None = None, limit: int | None = None) -> list[StreamRecord]:
        self._check_open()
        validate_name(stream, "stream")
        after = check_seq(after_seq, "after_seq") or 0
        limit = check_limit(limit)
        with self.storage.state_lock:
            rows = [r for r in self.storage.records.get(stream, []) if r[0] > after]
        rows = rows if limit is None else rows[:limit]
        return [StreamRecord(stream, seq, self.serializer.decode(text), at) for seq, text, at in rows]

    async def last_seq(self, stream: str) -> int:
        self._check_open()
        with self.storage.state_lock:
            return self.storage.last_seq.get(validate_name(stream, "stream"), 0)

    async def get(self, key: str) -> Any | None:
        self._check_open()
        with self.storage.state_lock:
            text = self.storage.kv.get(validate_name(key))
        return None if text is None else self.serializer.decode(text)

    async def scan(self, prefix: str = "", limit: int | None = None, after: str | None = None) -> list[KeyValue]:
        self._check_open()
        prefix = validate_prefix(prefix)
        if after is not None:
            validate_name(after, "after")
        with self.storage.state_lock:
            rows = _scan_rows(self.storage.sorted_keys, self.storage.kv, {}, prefix, after, check_limit(limit))
        return [KeyValue(k, self.serializer.decode(t)) for k, t in rows]

    async def close(self) -> None:
        self.closed = True
