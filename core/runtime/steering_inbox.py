"""Out-of-band messages for the turn already running on a session (mid-turn steering).

Not a second queue: a message is accepted only while the running turn's window is open.
The loop opens the window on entry, drains at the top of every step, and closes and
drains in one call on the way out, so every accepted message is either delivered at a
step boundary or handed back as undelivered — never lost in between.
"""

from __future__ import annotations

import enum

MAX_PENDING_STEERS = 16
MAX_STEER_CHARS = 64 * 1024


class SteerOutcome(str, enum.Enum):
    ACCEPTED = "accepted"
    NO_RUNNING_TURN = "no_running_turn"  # window shut: retry as a new turn
    FULL = "full"  # MAX_PENDING_STEERS already waiting
    TOO_LARGE = "too_large"
    EMPTY = "empty"

    @property
    def steered(self) -> bool:
        return self is SteerOutcome.ACCEPTED


class SteeringInbox:
    def __init__(self) -> None:
        self._open: dict[str, list[str]] = {}

    def open(self, session_id: str) -> None:
        self._open.setdefault(session_id, [])

    def is_open(self, session_id: str) -> bool:
        return session_id in self._open

    def push(self, session_id: str, text: str) -> SteerOutcome:
        if not text.strip():
            return SteerOutcome.EMPTY
        if len(text) > MAX_STEER_CHARS:
            return SteerOutcome.TOO_LARGE
        pending = self._open.get(session_id)
        if pending is None:
            return SteerOutcome.NO_RUNNING_TURN
        if len(pending) >= MAX_PENDING_STEERS:
            return SteerOutcome.FULL
        pending.append(text)
        return SteerOutcome.ACCEPTED

    def drain(self, session_id: str) -> list[str]:
        pending = self._open.get(session_id)
        if not pending:
            return []
        taken = list(pending)
        pending.clear()
        return taken

    def close_and_drain(self, session_id: str) -> list[str]:
        """Shut the window and take what is left, in one step (no gap to lose a message in)."""
        return self._open.pop(session_id, [])

    def clear_all(self) -> None:
        self._open.clear()
