"""Events the agent loop emits while a turn runs (hosts render or forward them).

An event is a plain dict with a `type` and camelCase fields, so every host (CLI, sidecar
NDJSON, HTTP SSE) can forward it as-is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Event = dict[str, Any]
EventSink = Callable[[Event], None]

TURN_STARTED = "turn_started"
STEP_STARTED = "step_started"
STEP_FINISHED = "step_finished"  # slotId, cacheN (prompt tokens reused), promptN (evaluated anew) of the step
REASONING_DELTA = "reasoning_delta"
TEXT_DELTA = "text_delta"
PARSE_RETRY = "parse_retry"
TOOL_CALL_STARTED = "tool_call_started"
TOOL_CALL_RESULT = "tool_call_result"
LOOP_DETECTED = "loop_detected"
APPROVAL_REQUEST = "approval_request"
ASSISTANT_REPLY = "assistant_reply"
TURN_NOTICE = "turn_notice"  # text for the person (not the model) a plugin shows as the turn ends: source, text
STEP_ERROR = "step_error"
LOOP_FAILED = "loop_failed"
LLM_UNAVAILABLE = "llm_unavailable"
TURN_FINISHED = "turn_finished"
TURN_QUEUED = "turn_queued"
STEER_APPLIED = "steer_applied"
STEER_UNDELIVERED = "steer_undelivered"
SESSION_FINISHED = "session_finished"


def event(kind: str, **fields: Any) -> Event:
    return {"type": kind, **fields}


def batch_fields(index: int, size: int) -> dict[str, int]:
    """batchIndex / batchSize only when the batch has more than one call."""
    return {"batchIndex": index, "batchSize": size} if size > 1 else {}


def discard(_event: Event) -> None:
    return None
