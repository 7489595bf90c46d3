"""Out-of-band messages for the turn already running on a session (mid-turn steering).

Not a second queue: a message is accepted only while the running turn's window is open.
The loop opens the window on entry, consumes at the top of every step, and closes and
takes what is left in one call on the way out, so every accepted message is either
delivered at a step boundary or handed back as undelivered — never lost in between.

With a durable queue (the runtime always gives one) an accepted message is committed
before `push` says ACCEPTED, its consumption is the same transaction as the user rows it
becomes, and one still queued when its process dies is turned into a queued turn by
recovery — so even a crash cannot drop a steer that was answered "yes".
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import attrs

from atomic_agent.turns.admissible_text import text_problem
from atomic_agent.turns.request_keys import DuplicateRequestError, RequestKey, steer_key_ref
from atomic_agent.turns.turn_repository import SteerRepository

MAX_PENDING_STEERS = 16
MAX_STEER_CHARS = 64 * 1024


class SteerOutcome(str, enum.Enum):
    ACCEPTED = "accepted"
    NO_RUNNING_TURN = "no_running_turn"  # window shut: retry as a new turn
    FULL = "full"  # MAX_PENDING_STEERS already waiting
    TOO_LARGE = "too_large"
    EMPTY = "empty"
    INVALID_TEXT = "invalid_text"  # not valid Unicode (a lone surrogate): nothing was queued
    DUPLICATE = "duplicate"  # its idempotency key already steered or admitted a turn: nothing queued

    @property
    def steered(self) -> bool:
        return self is SteerOutcome.ACCEPTED


@attrs.define
class _Window:
    turn_id: str | None
    pending: list[tuple[int | None, str]] = attrs.field(factory=list)  # (durable steer id, text)

    def ids(self) -> list[int]:
        return [i for i, _ in self.pending if i is not None]


# Remember an idempotency key inside the steer's transaction: (handle, key, turn id, session id);
# raises DuplicateRequestError when the key already names a turn (the ledger's remember_key_in).
RememberKey = Callable[[Any, RequestKey, str, str], None]


class SteeringInbox:
    def __init__(self, queue: SteerRepository | None = None, remember_key: RememberKey | None = None) -> None:
        self._open: dict[str, _Window] = {}
        self.queue = queue
        self.remember_key = remember_key

    def open(self, session_id: str, turn_id: str | None = None) -> None:
        self._open.setdefault(session_id, _Window(turn_id))

    def is_open(self, session_id: str) -> bool:
        return session_id in self._open

    def push(self, session_id: str, text: str, request_key: RequestKey | None = None) -> SteerOutcome:
        """Accept `text` for the running turn, durably; anything but ACCEPTED queued nothing.

        With `request_key` (a channel's delivery id) the key is committed with the steer,
        naming the running turn: a message redelivered after a crash finds that turn
        (`turn_for_key`) instead of steering twice, and DUPLICATE says the key was used.
        A failed durable write raises (a typed SessionStoreError naming the file) and
        accepts nothing."""
        if not text.strip():
            return SteerOutcome.EMPTY
        if text_problem(text) is not None:
            return SteerOutcome.INVALID_TEXT
        if len(text) > MAX_STEER_CHARS:
            return SteerOutcome.TOO_LARGE
        window = self._open.get(session_id)
        if window is None:
            return SteerOutcome.NO_RUNNING_TURN
        if len(window.pending) >= MAX_PENDING_STEERS:
            return SteerOutcome.FULL
        steer_id = None
        if self.queue is not None and window.turn_id is not None:
            turn_id = window.turn_id
            remember = None
            if request_key is not None and self.remember_key is not None:
                remember_key = self.remember_key

                def remember(handle: Any, new_id: int) -> None:
                    key = attrs.evolve(request_key, caller_ref=steer_key_ref(new_id))
                    remember_key(handle, key, turn_id, session_id)
            try:
                steer_id = self.queue.enqueue(session_id, turn_id, text, remember)
            except DuplicateRequestError:
                return SteerOutcome.DUPLICATE
        window.pending.append((steer_id, text))
        return SteerOutcome.ACCEPTED

    def pending_count(self, session_id: str) -> int:
        window = self._open.get(session_id)
        return 0 if window is None else len(window.pending)

    def consume(self, session_id: str, record: Callable[[list[str]], object], limit: int | None = None) -> list[str]:
        """Take the pending messages (the oldest `limit` of them; all when None) and `record`
        them (the user transcript rows) — with a durable queue in the same transaction that
        deletes them from it. If `record` raises the messages stay pending."""
        window = self._open.get(session_id)
        if window is None or not window.pending:
            return []
        taken = list(window.pending if limit is None else window.pending[:limit])
        if self.queue is not None and any(i is not None for i, _ in taken):
            texts = self.queue.consume([i for i, _ in taken if i is not None], record)
        else:
            texts = [t for _, t in taken]
            record(texts)
        del window.pending[:len(taken)]
        return texts

    def close_and_hand_back(self, session_id: str) -> list[tuple[int | None, str]]:
        """Shut the window and take what is left, in one step (no gap to lose a message in):
        (durable steer id, text) pairs. Durable copies stay queued, marked handed back with
        the turn's id, until the caller re-sends (`resend_steer_id`) or dismisses them."""
        window = self._open.pop(session_id, None)
        if window is None:
            return []
        if self.queue is not None and window.ids() and window.turn_id is not None:
            self.queue.hand_back(window.ids(), window.turn_id)
        return list(window.pending)

    def clear_all(self) -> None:
        """Forget every window (shutdown). Durable copies stay for recovery to answer."""
        self._open.clear()
