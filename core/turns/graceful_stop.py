"""A graceful stop ("drain or park"): what a host does with its turns on SIGTERM/SIGINT.

1. Stop admitting: `TurnLifecycle.run` refuses new messages with RuntimeStoppingError
   (nothing written), and no queued turn starts any more.
2. Each running turn is asked to park: it finishes the step it is in and ends at the next
   step boundary as `interrupted`, with a failure note; a turn whose step ends in a reply
   simply completes. The grace period (`graceS`) bounds the wait.
3. When the grace period is over, what still runs is parked hard: its step is abandoned
   (the inference or tool call is cancelled, its open calls answered) and it ends
   `interrupted` the same way.
4. Queued turns stay queued: their callers hear TurnParkedError (a message that was
   acknowledged and is still owed), and the next start adopts them in lane order, while
   each interrupted turn's note makes recovery admit the continuation that answers it.

So a restart after SIGTERM answers every accepted message exactly once, as it does after
SIGKILL, but without waiting for a dead owner to be noticed and with every client told.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from atomic_agent.turns.turn_lifecycle import TurnLifecycle

DEFAULT_GRACE_S = 10.0
POLL_S = 0.02  # how often the drain looks at what still runs (a wait, never a speed expectation)


class RuntimeStoppingError(RuntimeError):
    """The runtime is stopping and admits nothing more; the caller should send the message
    again to the next start (nothing of it was written)."""

    def __init__(self) -> None:
        super().__init__("the agent is stopping and accepts no new messages; nothing was written, send it again "
                         "once it has restarted")


class TurnParkedError(Exception):
    """The runtime stopped before this acknowledged turn ran (or finished): it stays owed and
    the next start answers it. Nothing is lost; re-sending the text would answer it twice."""

    def __init__(self, turn_id: str, session_id: str, started: bool = False) -> None:
        how = "was interrupted at a step boundary" if started else "stays queued"
        super().__init__(f"the agent is stopping: turn {turn_id} of session {session_id} {how}; it is answered "
                         "after the next start (do not send the message again)")
        self.turn_id = turn_id
        self.session_id = session_id
        self.started = started


@attrs.frozen
class DrainReport:
    finished: int  # running turns that ended on their own (a reply, or parked at a step boundary)
    parked_hard: int  # running turns whose step was abandoned when the grace period ran out
    seconds: float


async def drain(lifecycle: TurnLifecycle, grace_s: float) -> DrainReport:
    """Stop admitting, park every running turn within `grace_s`, and wait for them to end."""
    started = time.monotonic()
    lifecycle.stopping = True
    first = lifecycle.park_all(hard=False)
    deadline = started + max(grace_s, 0.0)
    while lifecycle.running_count() and time.monotonic() < deadline:
        await asyncio.sleep(min(POLL_S, max(deadline - time.monotonic(), 0.0)))
    hard = lifecycle.park_all(hard=True) if lifecycle.running_count() else 0
    while lifecycle.running_count():
        await asyncio.sleep(POLL_S)
    return DrainReport(max(first - hard, 0), hard, round(time.monotonic() - started, 3))
