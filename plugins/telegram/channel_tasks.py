"""The channel's background tasks (one per update, per delivery): kept until done so a close
can wait for them, and a failure printed (scrubbed of the token) instead of lost."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any


class ChannelTasks:
    def __init__(self, scrub: Callable[[str], str]) -> None:
        self._scrub = scrub
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    async def wait_all(self) -> None:
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            print(f"atomic-agent: telegram task failed: {self._scrub(f'{type(exc).__name__}: {exc}')}",
                  file=sys.stderr)
