"""The parked turns this process resumes, one task each: what a turn waiting behind one asks.

A parked turn holds its lane (turn_states.LANE_HOLDERS) until it is resumed, so the turn
lifecycle, finding one in its way, needs to know whether this process is already resuming
it (then it waits), and otherwise to start resuming it here: its own parked turn whose
resume ended (the host closed before anyone answered), a dead owner's (claimed first), or a
dead owner's running turn that waited on an approval and was just parked instead of
interrupted. Resuming shows the pending approval again on this process's surfaces (through
the gate), waits for the answer from any surface, lets the frozen call run once (or tells
the model no), and closes the turn `resumed`.

Recovery starts its resumes here too (settling through the TurnController); the lifecycle's
settle directly, since the turn waiting behind the parked one holds the controller's lane.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.turns.restart_recovery import approvals_waited_on, resume_parked_turn, settle_now
from atomic_agent.turns.turn_states import TurnRecord

if TYPE_CHECKING:
    from atomic_agent.turns.turn_execution import TurnServices
    from atomic_agent.turns.turn_lifecycle import TurnLifecycle


class ParkedTurnResumer:
    def __init__(self, services: TurnServices, lifecycle: TurnLifecycle) -> None:
        self._services = services
        self._lifecycle = lifecycle
        self._tasks: dict[str, asyncio.Future[TurnResult]] = {}  # turn id -> its resume in this process

    def waiting_on(self, turn: TurnRecord) -> list[str]:
        """Ids of the durable approval records a (dead) turn's open calls wait on: parked if any."""
        return approvals_waited_on(self._services, turn)

    def resuming(self, turn_id: str) -> bool:
        task = self._tasks.get(turn_id)
        return task is not None and not task.done()

    def resume(self, turn: TurnRecord, continue_after: bool = True, sink: ev.EventSink = ev.discard,
               settle: Callable[[str], Awaitable[int]] | None = None) -> asyncio.Future[TurnResult]:
        """Start resuming `turn` (parked, owned by this process) in the background; the
        resume already running for it when there is one. `continue_after`: admit and run
        the continuation the session is owed afterwards (unless a later turn will answer)."""
        running = self._tasks.get(turn.turn_id)
        if running is not None and not running.done():
            return running
        task = asyncio.ensure_future(resume_parked_turn(self._services, self._lifecycle, turn, continue_after, sink,
                                                        settle or partial(settle_now, self._services)))
        self._tasks[turn.turn_id] = task
        task.add_done_callback(partial(self._forget, turn.turn_id))
        return task

    def _forget(self, turn_id: str, task: asyncio.Future[TurnResult]) -> None:
        if self._tasks.get(turn_id) is task:
            del self._tasks[turn_id]
