"""A bounded record of what the app saw: runtime turn events and the notices it showed.

The Logs tab reads it; nothing else depends on it. Old entries fall off the front so a
long-running app keeps a constant amount.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

import attrs

MAX_ENTRIES = 2000


@attrs.frozen
class LogEntry:
    at: float
    source: str  # "turn" | "notice" | "job"
    text: str


class EventLog:
    def __init__(self, limit: int = MAX_ENTRIES) -> None:
        self.entries: deque[LogEntry] = deque(maxlen=limit)
        self.listeners: list[Callable[[LogEntry], None]] = []

    def add(self, source: str, text: str) -> None:
        entry = LogEntry(time.time(), source, text)
        self.entries.append(entry)
        for listener in list(self.listeners):
            listener(entry)

    def add_event(self, event: dict[str, Any]) -> None:
        if event.get("type") in ("reasoning_delta", "text_delta"):
            return  # per-token deltas would push everything else out
        from atomic_agent.plugins.tui.feed_lines import preview

        fields = {k: v for k, v in event.items() if k != "type"}
        self.add("turn", f"{event.get('type')} {preview(fields, 200)}")
