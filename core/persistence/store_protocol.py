"""The store protocol every backend implements (SQLite now, PostgreSQL later).

Two spaces live in one store:

- **streams**: per-stream append-only records. `append` returns the new `seq` (1, 2, 3, ...
  per stream, never reused). There is no API that rewrites a record; `drop_through` removes a
  whole prefix of a stream and exists for compaction only.
- **a sorted key-value space**: `get`, `put`, `scan(prefix)` in key order, and three atomic
  conditional operations that let owners who cannot see each other share one store safely:
  `write_if_absent`, `compare_and_set` and `claim` (claim-by-delete). Of two owners racing for
  one key, exactly one is told it won.

Every write happens inside `async with store.transaction(durable=...) as tx:`; leaving the
block normally commits everything in it atomically, an exception (including BaseException such
as a simulated crash, or cancellation) rolls all of it back. When `__aexit__` returns the commit
has happened; nothing is "done" before that. `durable=True` (the default) is for commits that
acknowledge something to a user or connector: they survive power loss, and they make every
earlier non-durable commit durable too. `durable=False` is for streaming partials, which
survive a process crash but may be lost with power.

Values are JSON values (or attrs records, unstructured by the serializer); `None` is not a
value in the key-value space, so `get` and `claim` return None exactly when the key is absent.
Equality for compare-and-set is equality of canonical JSON text, so 1 and 1.0 differ.

Reads on the store itself see committed data only; reads on a transaction see its own writes.
Keep transactions short: they hold the store's single writer while they are open.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol, runtime_checkable

from atomic_agent.persistence.change_notifier import Notifier
from atomic_agent.persistence.json_serializer import Serializer
from atomic_agent.persistence.store_clock import Clock
from atomic_agent.persistence.store_records import KeyValue, StreamRecord


@runtime_checkable
class StoreReader(Protocol):
    """Reads shared by the store (committed state) and a transaction (its own view)."""

    async def read(self, stream: str, after_seq: int | None = None, limit: int | None = None) -> list[StreamRecord]:
        """Records of `stream` with seq > after_seq (all when None), oldest first."""
        ...

    async def last_seq(self, stream: str) -> int:
        """The seq of the newest record ever appended (0 for a stream never written), counting
        records a compaction has since dropped."""
        ...

    async def get(self, key: str) -> Any | None: ...

    async def scan(self, prefix: str = "", limit: int | None = None, after: str | None = None) -> list[KeyValue]:
        """Pairs whose key starts with `prefix`, in key order, starting after the key `after`."""
        ...


@runtime_checkable
class Transaction(StoreReader, Protocol):
    async def append(self, stream: str, record: Any) -> int:
        """Append one record; returns its seq."""
        ...

    async def drop_through(self, stream: str, seq: int) -> int:
        """Compaction only: remove every record of `stream` with seq <= `seq`; returns how many
        were removed. Later appends keep counting from `last_seq`."""
        ...

    async def put(self, key: str, value: Any) -> None: ...

    async def write_if_absent(self, key: str, value: Any) -> bool:
        """Write only if the key is absent; True if this call wrote it."""
        ...

    async def compare_and_set(self, key: str, expected: Any, new: Any | None) -> bool:
        """Replace the value only if it is currently `expected`; `new=None` deletes it instead.
        True if this call changed it."""
        ...

    async def claim(self, key: str) -> Any | None:
        """Delete the key and return the value it held (None if it was absent): of several
        claimers exactly one gets the value."""
        ...


@runtime_checkable
class Store(StoreReader, Protocol):
    clock: Clock
    notifier: Notifier
    serializer: Serializer

    def transaction(self, durable: bool = True) -> AbstractAsyncContextManager[Transaction]: ...

    async def close(self) -> None:
        """Finish queued work, then release connections; later calls raise StoreClosedError."""
        ...
