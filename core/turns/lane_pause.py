"""How a turn waits while another live owner holds its lane: a growing pause, cancellable.

Owners share no memory, only the database, so a turn queued behind another process's turn
re-checks the ledger after each pause. The pause starts short (a turn that just finished
frees the lane at once) and grows to a cap (a long turn is not polled hundreds of times a
second). A caller's cancel ends the wait as a withdrawal, exactly like a cancel while
waiting in this process's TurnController.
"""

from __future__ import annotations

import asyncio
import contextlib

from atomic_agent.runtime.turn_controller import SubmissionCancelledError

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
