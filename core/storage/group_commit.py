"""Group commit: concurrent turns share one fsync of a state file's WAL.

A `synchronous=FULL` commit fsyncs the WAL before it returns, on the event loop, one
commit after another: with ~4 ms per fsync, a busy `serve` spends its time waiting for
the disk. Code that can wait asynchronously instead commits inside `deferred_sync()`:
the store commits with `synchronous=NORMAL` (atomic and visible at once, not yet on disk)
and the caller then awaits `GroupSync.wait()` before it acknowledges anything. One fsync,
run off the event loop, covers every commit made before it started, so the turns that
commit while one fsync runs all wait for the next one — N concurrent callers, one fsync.

Why one fsync of the WAL suffices: a WAL-mode commit appends its frames (commit frame
last) to the `-wal` file, and `synchronous=FULL` differs from `NORMAL` only in syncing
that file at the commit. An fsync of the file made after the commit returned flushes
those frames, and every earlier one; a checkpoint in `NORMAL` syncs the WAL before it
copies frames into the database and the database after. The WAL is replayed as a prefix,
so a power cut keeps a prefix of the commits, never a commit without the ones before it.
A `FULL` commit on the same connection makes every earlier commit durable too.

`deferred_sync()` is a context variable: only the writes made synchronously inside the
block, in this task, are relaxed; every other write keeps its own durability.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

_deferred: contextvars.ContextVar[bool] = contextvars.ContextVar("atomic_agent_deferred_sync", default=False)


@contextmanager
def deferred_sync() -> Iterator[None]:
    """Durable commits made inside are relaxed: the caller awaits the store's `wait_durable()`
    before it tells anyone about them."""
    token = _deferred.set(True)
    try:
        yield
    finally:
        _deferred.reset(token)


def sync_is_deferred() -> bool:
    return _deferred.get()


def wal_fsync(database: Path) -> Callable[[], None]:
    """fsync of `database`'s WAL (of the database itself when there is no WAL any more)."""

    def sync() -> None:
        for path in (Path(f"{database}-wal"), database):
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            return

    return sync


class GroupSync:
    """One state file's relaxed commits and the shared fsyncs that make them durable.

    Counters, not timestamps: `committed` counts relaxed commits, `synced` the commits known
    durable. A waiter needs `synced` to reach the count at the moment it asked; an fsync
    started after its commit covers it.

    Waiters are released strictly in the order they began to wait (their commits' order):
    a later caller never hears "durable" before an earlier one, even when a FULL commit on
    the connection covers both while the earlier one waits on an fsync already running —
    acknowledgements, and so the lane order callers see, follow the admission order."""

    # False: `wait` fsyncs at once on the calling thread and returns without yielding, as a
    # FULL commit did — no sharing, but the loop turns a turn takes are those of a FULL commit
    # and no thread's timing enters them (the chaos suites replay interleavings by loop turns,
    # and a process crash, which they simulate, never depends on an fsync)
    offload = True

    def __init__(self, sync: Callable[[], None]) -> None:
        self._sync = sync
        self.committed = 0
        self.synced = 0
        self.fsyncs = 0  # how many fsyncs ran (benchmarks and tests read it)
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()  # (commits needed, its signal)
        self._running: asyncio.Task[None] | None = None
        self._thread: ThreadPoolExecutor | None = None  # its own: a busy default executor must not delay an fsync

    def close(self) -> None:
        """Stop the fsync thread (the store is closing; nothing may be waiting)."""
        if self._thread is not None:
            self._thread.shutdown(wait=True)
            self._thread = None

    def relaxed_commit(self) -> None:
        self.committed += 1

    def durable_commit(self) -> None:
        """A FULL commit just returned: everything committed before it is on disk."""
        self.synced = self.committed
        self._release()

    @property
    def pending(self) -> bool:
        return self.synced < self.committed

    async def wait(self) -> None:
        """Return once every commit made before this call is on disk (OSError if the fsync
        failed: then nothing is known durable, and the caller acknowledges nothing).

        The fsync runs on a worker thread while the loop serves other turns; those that commit
        meanwhile share the next one. (Run on the loop itself it measured slower here: 3-6 ms
        per fsync against 0.2-1 ms from the thread, and the loop stalls for each.)"""
        target = self.committed
        if self.synced >= target and not self._waiters:
            return
        if not self.offload and not self._waiters:
            self.wait_blocking()
            return
        signal: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((target, signal))
        self._release()
        if not signal.done() and self._running is None:
            self._running = asyncio.ensure_future(self._run())
        await signal

    def wait_blocking(self) -> None:
        """`wait` for code without an event loop: one fsync on this thread when any is owed."""
        if self.synced < self.committed:
            upto = self.committed
            self._sync()
            self.fsyncs += 1
            self.synced = max(self.synced, upto)
            self._release()

    def _release(self) -> None:
        """Signal the waiters whose commits are durable, oldest first, stopping at the first
        that is not (so none overtakes an older one)."""
        while self._waiters and self._waiters[0][0] <= self.synced:
            _, signal = self._waiters.popleft()
            _settle(signal, None)

    async def _run(self) -> None:
        """fsync until every waiter is released; a failed fsync fails every waiter it was to cover."""
        loop = asyncio.get_running_loop()
        try:
            while self._waiters:
                upto = self.committed
                if self._thread is None:
                    self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wal-fsync")
                try:
                    await loop.run_in_executor(self._thread, self._sync)
                except BaseException as exc:
                    failed = [signal for target, signal in self._waiters if target <= upto]
                    self._waiters = deque((t, s) for t, s in self._waiters if t > upto)
                    for signal in failed:
                        _settle(signal, exc if isinstance(exc, Exception) else OSError(str(exc)))
                    if not isinstance(exc, Exception):
                        raise
                    continue
                self.fsyncs += 1
                self.synced = max(self.synced, upto)
                self._release()
        finally:
            self._running = None


def _settle(signal: asyncio.Future[None], error: Exception | None) -> None:
    """Tell one waiter; a cancelled one (or one whose event loop is gone) is just dropped."""
    if signal.done() or signal.get_loop().is_closed():
        return
    if error is None:
        signal.set_result(None)
    else:
        signal.set_exception(error)
