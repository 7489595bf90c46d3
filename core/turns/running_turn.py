"""A running turn as its lifecycle holds it: how it is told to stop, and the small helpers
around the tasks that run turns nobody waits on."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable

import attrs

from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.turns.graceful_stop import TurnParkedError


@attrs.frozen
class TurnStops:
    """How a running turn is told to stop: `cancel` now (a user stop, the caller's cancel, a
    hard park), `park` at the next step boundary (a graceful stop: it ends `interrupted`)."""

    cancel: asyncio.Event
    park: asyncio.Event


@attrs.define
class RunningTurn:
    turn_id: str
    cancel: asyncio.Event
    park: asyncio.Event = attrs.field(factory=asyncio.Event)
    stopped: bool = False
    state: str = ""

    def stops(self) -> TurnStops:
        return TurnStops(self.cancel, self.park)


def forget_unattended(tasks: set[asyncio.Task[TurnResult]]) -> Callable[[asyncio.Task[TurnResult]], None]:
    def done(task: asyncio.Task[TurnResult]) -> None:
        tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if isinstance(exc, TurnParkedError):
                return  # a graceful stop left it queued: the next start answers it
            print(f"atomic-agent: a turn made from a handed-back steer failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)

    return done


def link_cancel(source: asyncio.Event | None, target: asyncio.Event) -> asyncio.Task[None] | None:
    """Set `target` when the caller's `source` is set; the caller's event is never set by a stop."""
    if source is None:
        return None
    if source.is_set():
        target.set()
        return None

    async def follow() -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await source.wait()
            target.set()

    return asyncio.ensure_future(follow())
