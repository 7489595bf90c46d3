"""Clock: wall time for record timestamps and lease expiry, injectable so tests control time."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch. Wall time, because leases are compared across processes."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class ManualClock:
    """Time moves only when a test calls `advance` or `set`; sleepers wake when it passes their
    deadline. Safe to share between threads and event loops."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()
        self._sleepers: list[tuple[float, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def now(self) -> float:
        with self._lock:
            return self._now

    def set(self, when: float) -> None:
        with self._lock:
            if when < self._now:
                raise ValueError(f"a ManualClock never goes back (now {self._now}, asked {when})")
            self._now = float(when)
            due = [s for s in self._sleepers if s[0] <= self._now]
            self._sleepers = [s for s in self._sleepers if s[0] > self._now]
        for _, loop, future in due:
            loop.call_soon_threadsafe(_wake, future)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("advance() takes a non-negative number of seconds")
        self.set(self.now() + seconds)

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            deadline = self._now + max(0.0, seconds)
            if deadline <= self._now:
                return
            self._sleepers.append((deadline, loop, future))
        await future


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
