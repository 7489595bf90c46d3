"""Server-sent-event frames: `data:` lines for OpenAI clients, named events for extensions."""

from __future__ import annotations

import json
from typing import Any

DONE = "data: [DONE]\n\n"
KEEP_ALIVE = ": keep-alive\n\n"  # a comment line: every SSE client skips it


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def data_frame(payload: Any) -> str:
    return f"data: {_dumps(payload)}\n\n"


def event_frame(name: str, payload: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {_dumps(payload)}\n\n"
