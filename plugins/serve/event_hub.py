"""Fan-out of runtime events to GET /api/events subscribers.

Publishing never blocks a turn: each subscriber has a bounded queue, and one that falls
that far behind is marked overflowed and its stream ends with an error frame (the client
reconnects; pending approvals are replayed on connect, so none is lost).
"""

from __future__ import annotations

import asyncio
from typing import Any

SUBSCRIBER_QUEUE = 2000


class Subscriber:
    def __init__(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(SUBSCRIBER_QUEUE)
        self.overflowed = False

    def wants(self, event: dict[str, Any]) -> bool:
        return self.session_id is None or event.get("sessionId") == self.session_id


class EventHub:
    def __init__(self) -> None:
        self._subscribers: set[Subscriber] = set()
        self.published = 0

    def subscribe(self, session_id: str | None = None) -> Subscriber:
        subscriber = Subscriber(session_id)
        self._subscribers.add(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.discard(subscriber)

    def publish(self, event: dict[str, Any]) -> None:
        self.published += 1
        for subscriber in list(self._subscribers):
            if subscriber.overflowed or not subscriber.wants(event):
                continue
            try:
                subscriber.queue.put_nowait(event)
            except asyncio.QueueFull:
                subscriber.overflowed = True

    def __len__(self) -> int:
        return len(self._subscribers)
