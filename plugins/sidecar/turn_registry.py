"""The turns this sidecar started and has not seen finish: for abort, shutdown and approvals.

`CURRENT_TURN` is set inside each turn's task, so an approval asked from deep inside a
tool call knows which turn it belongs to without a lookup that could pick another one.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid

import attrs

CURRENT_TURN: contextvars.ContextVar[str | None] = contextvars.ContextVar("sidecar_turn", default=None)


def new_turn_id() -> str:
    return f"turn_{uuid.uuid4().hex[:16]}"


@attrs.define
class TurnHandle:
    turn_id: str
    session_id: str
    cancel: asyncio.Event
    task: asyncio.Task[None] | None = None
    ledger_turn_id: str | None = None  # the runtime's turn id, known once `turn_queued` arrived


class TurnRegistry:
    def __init__(self) -> None:
        self._turns: dict[str, TurnHandle] = {}  # insertion order = submission order

    def add(self, handle: TurnHandle) -> None:
        self._turns[handle.turn_id] = handle

    def remove(self, turn_id: str) -> None:
        self._turns.pop(turn_id, None)

    def get(self, turn_id: str) -> TurnHandle | None:
        return self._turns.get(turn_id)

    def of_session(self, session_id: str) -> list[TurnHandle]:
        return [h for h in self._turns.values() if h.session_id == session_id]

    def __len__(self) -> int:
        return len(self._turns)

    def cancel_all(self) -> None:
        for handle in self._turns.values():
            handle.cancel.set()

    async def wait_all(self) -> None:
        tasks = [h.task for h in self._turns.values() if h.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
