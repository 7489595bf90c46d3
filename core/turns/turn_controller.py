"""The only path into the agent loop: per-session FIFO, cross-session parallel, no priorities.

At most one turn runs per session; same-session submissions run strictly in submission
order whatever their origin (cli, tui, http, sidecar, scheduler, channel). The session's
event hook is installed before the turn runs and cleared after, so a hook never sees
another session's events. A submission cancelled while it waits rejects without running.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from atomic_agent.agent.agent_events import Event, EventSink

# How a turn waits while another live owner holds its lane: a growing pause, cancellable.
#
# Owners share no memory, only the database, so a turn queued behind another process's turn
# re-checks the ledger after each pause. The pause starts short (a turn that just finished
# frees the lane at once) and grows to a cap (a long turn is not polled hundreds of times a
# second). A caller's cancel ends the wait as a withdrawal, exactly like a cancel while
# waiting in this process's TurnController.

FIRST_PAUSE_S = 0.005
MAX_PAUSE_S = 0.2
GROWTH = 1.5


class LanePause:
    def __init__(self, cancelled: asyncio.Event | None) -> None:
        self._cancelled = cancelled
        self._next = FIRST_PAUSE_S

    async def wait(self) -> None:
        """Sleep the next pause; SubmissionCancelledError if the caller cancelled meanwhile."""
        delay, self._next = self._next, min(self._next * GROWTH, MAX_PAUSE_S)
        if self._cancelled is None:
            await asyncio.sleep(delay)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._cancelled.wait(), delay)
        if self._cancelled.is_set():
            raise SubmissionCancelledError("cancelled while another process's turn held the session")


T = TypeVar("T")
ORIGINS = ("cli", "tui", "http", "sidecar", "scheduler", "channel", "telegram")
# submitted by the runtime itself, never by a caller: the continuation a restart owes
RUNTIME_ORIGINS = ("recovery",)


class SubmissionCancelledError(Exception):
    """The submission was cancelled before its turn started; nothing ran."""


class TurnController:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._waiting: dict[str, int] = {}
        self._busy: dict[str, str] = {}  # session id -> origin of the running turn
        self._hooks: dict[str, EventSink] = {}

    def is_busy(self, session_id: str) -> bool:
        return session_id in self._busy

    def busy_session_ids(self) -> list[str]:
        return sorted(self._busy)

    def queue_position(self, session_id: str) -> int:
        """How many submissions on the session are ahead of a new one (running + waiting)."""
        return (1 if session_id in self._busy else 0) + self._waiting.get(session_id, 0)

    def emit(self, session_id: str, event: Event) -> None:
        """The single dispatch path from a running turn to its session's hook."""
        hook = self._hooks.get(session_id)
        if hook is not None:
            hook(event)

    async def submit(self, session_id: str, run: Callable[[], Awaitable[T]], *, origin: str = "cli",
                     on_event: EventSink | None = None, cancelled: asyncio.Event | None = None,
                     on_queued: Callable[[int], Any] | None = None) -> T:
        if origin not in ORIGINS and origin not in RUNTIME_ORIGINS:
            raise ValueError(f"unknown turn origin {origin!r}; one of {', '.join(ORIGINS)}")
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        position = self.queue_position(session_id)
        if on_queued is not None:
            on_queued(position)
        self._waiting[session_id] = self._waiting.get(session_id, 0) + 1
        try:
            await self._acquire(lock, cancelled)
        finally:
            self._waiting[session_id] -= 1
            if not self._waiting[session_id]:
                del self._waiting[session_id]
        try:
            self._busy[session_id] = origin
            if on_event is not None:
                self._hooks[session_id] = on_event
            return await run()
        finally:
            self._hooks.pop(session_id, None)
            self._busy.pop(session_id, None)
            lock.release()
            if not lock.locked() and session_id not in self._waiting:
                self._locks.pop(session_id, None)

    @staticmethod
    async def _acquire(lock: asyncio.Lock, cancelled: asyncio.Event | None) -> None:
        if cancelled is None:
            await lock.acquire()
            return
        if cancelled.is_set():
            raise SubmissionCancelledError("cancelled before the turn started")
        acquire = asyncio.ensure_future(lock.acquire())
        stop = asyncio.ensure_future(cancelled.wait())

        def withdraw() -> None:  # give the lock back, or stop waiting for it
            if acquire.done() and not acquire.cancelled():
                lock.release()
            else:
                acquire.cancel()

        try:
            await asyncio.wait({acquire, stop}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # the caller's own task was cancelled: the acquire must not go on waiting without it,
            # or it would take the lock when the earlier turn ends and hold the session forever
            withdraw()
            raise
        finally:
            stop.cancel()
        if cancelled.is_set():
            withdraw()
            raise SubmissionCancelledError("cancelled while waiting for an earlier turn on the session")
