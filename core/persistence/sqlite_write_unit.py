"""What the SQLite writer thread and its callers share: a unit of work (one transaction
block), the counters it keeps, and settling a caller's future from the writer thread."""

from __future__ import annotations

import asyncio
import queue
from typing import Any

import attrs

from atomic_agent.persistence.persistence_errors import PersistenceError

COMMIT = "commit"
ROLLBACK = "rollback"


def _settle(future: asyncio.Future[Any], result: Any = None, error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def resolve(loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], result: Any = None,
            error: BaseException | None = None) -> None:
    """Settle a caller's future from the writer thread; a closed loop has nobody waiting."""
    try:
        loop.call_soon_threadsafe(_settle, future, result, error)
    except RuntimeError:
        pass


class WriteUnit:
    """One transaction block as the writer sees it. Once `started` resolves the caller may run
    statements on the writer's connection (under `conn_lock`); it ends the unit by putting
    COMMIT or ROLLBACK on `ops`."""

    def __init__(self, durable: bool, loop: asyncio.AbstractEventLoop) -> None:
        self.durable = durable
        self.loop = loop
        self.ops: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.started: asyncio.Future[None] = loop.create_future()
        self.done: asyncio.Future[None] = loop.create_future()
        self.streams: set[str] = set()
        self.keys: set[str] = set()
        self.lost: PersistenceError | None = None  # set when SQLite rolled the whole group back
        self.finished = False  # set by the caller once the block has been left


@attrs.define
class WriterStats:
    """Counters for tests and benchmarks (read them from any thread; they only grow)."""

    commits: int = 0
    full_commits: int = 0
    normal_commits: int = 0
    units_committed: int = 0
    largest_group: int = 0
    level_switches: int = 0
