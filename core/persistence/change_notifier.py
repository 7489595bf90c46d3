"""Notifier: wake waiters when a stream or a key under a prefix changes.

A watch is registered before the caller reads the state it waits on, and remembers a change
that lands between that read and `wait()`, so no wake-up is lost. `LocalNotifier` covers
writers in this process; a waiter that must also see other processes' writes passes a timeout
and re-reads (a polling fallback, like LISTEN/NOTIFY setups keep for dropped notifications).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from atomic_agent.persistence.store_records import ChangeSet


@runtime_checkable
class Watch(Protocol):
    async def wait(self, timeout: float | None = None) -> bool:
        """True once something watched changed since the watch was made (or since the last
        wait that returned True); False on timeout."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class Notifier(Protocol):
    def publish(self, changes: ChangeSet) -> None:
        """Called after a commit with what it changed; thread-safe."""
        ...

    def watch(self, *, streams: Iterable[str] = (), key_prefixes: Iterable[str] = ()) -> Watch: ...


class LocalWatch:
    def __init__(self, notifier: LocalNotifier, streams: frozenset[str], key_prefixes: tuple[str, ...]) -> None:
        self._notifier = notifier
        self.streams = streams
        self.key_prefixes = key_prefixes
        self._loop = asyncio.get_running_loop()
        self._event = asyncio.Event()

    def matches(self, changes: ChangeSet) -> bool:
        if self.streams & changes.streams:
            return True
        return any(key.startswith(prefix) for key in changes.keys for prefix in self.key_prefixes)

    def _fire(self) -> None:
        self._loop.call_soon_threadsafe(self._event.set)

    async def wait(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except asyncio.TimeoutError:
            return False
        self._event.clear()
        return True

    def close(self) -> None:
        self._notifier._remove(self)

    def __enter__(self) -> LocalWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class LocalNotifier:
    """In-process notifier; watches may live on different threads and event loops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: list[LocalWatch] = []

    def watch(self, *, streams: Iterable[str] = (), key_prefixes: Iterable[str] = ()) -> LocalWatch:
        watch = LocalWatch(self, frozenset(streams), tuple(key_prefixes))
        if not watch.streams and not watch.key_prefixes:
            raise ValueError("a watch needs at least one stream or key prefix to watch")
        with self._lock:
            self._watches.append(watch)
        return watch

    def _remove(self, watch: LocalWatch) -> None:
        with self._lock:
            if watch in self._watches:
                self._watches.remove(watch)

    def publish(self, changes: ChangeSet) -> None:
        if not changes:
            return
        with self._lock:
            hit = [w for w in self._watches if w.matches(changes)]
        for watch in hit:
            try:
                watch._fire()
            except RuntimeError:  # its event loop is closed: nobody is waiting any more
                self._remove(watch)
