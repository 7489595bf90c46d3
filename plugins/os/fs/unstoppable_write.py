"""A file change made in a worker thread runs to its end once it has started: a thread
cannot be stopped, so a cancelled turn that stopped waiting for it would record the call as
"cancelled" while the change still landed a moment later. The tool waits for it instead
and reports what was done; the batch executor keeps a result that arrives after its cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def write_to_the_end(change: Callable[..., T], *args: object) -> T:
    """`change(*args)` in a worker thread, awaited to its end even when this task is cancelled
    meanwhile (the cancel is absorbed: the change's result, or its error, is the answer)."""
    work = asyncio.ensure_future(asyncio.to_thread(change, *args))
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        if work.cancelled():
            raise
        return await work
