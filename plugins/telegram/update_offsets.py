"""Which Telegram updates may be confirmed (the `offset` of the next getUpdates).

Telegram forgets every update below the offset a getUpdates call passes, so an update is
confirmed only once what it asked for is durable (its turn's admission committed, its
steer queued, its command done). Updates are handled concurrently, so the offset stops at
the oldest one still in flight; updates Telegram hands out again meanwhile are recognised
and not handled twice.
"""

from __future__ import annotations

from collections.abc import Callable


class UpdateOffsets:
    def __init__(self, on_settle: Callable[[], None] | None = None, start: int | None = None) -> None:
        """`start`: the offset a previous poller confirmed up to (updates below it are done)."""
        self._on_settle = on_settle
        self.in_flight: set[int] = set()
        self._seen: set[int] = set()
        self._highest: int | None = None if start is None else start - 1

    def admit(self, update_id: int) -> bool:
        """True the first time this process sees the update (handle it); False after."""
        offset = self.next_offset
        if update_id in self._seen or (offset is not None and update_id < offset):
            return False  # in flight, or already confirmed
        self._seen.add(update_id)
        self.in_flight.add(update_id)
        self._highest = update_id if self._highest is None else max(self._highest, update_id)
        return True

    def settle(self, update_id: int) -> None:
        """What the update asked for is durable: it may be confirmed."""
        self.in_flight.discard(update_id)
        floor = self.next_offset
        if floor is not None:
            self._seen = {u for u in self._seen if u >= floor}
        if self._on_settle is not None:
            self._on_settle()

    @property
    def next_offset(self) -> int | None:
        if self.in_flight:
            return min(self.in_flight)
        return None if self._highest is None else self._highest + 1
