"""OpenAI shapes of a turn's outcome: chat.completion, chat.completion.chunk, or an error,
and the server-sent-event frames streams go out in (`data:` lines for OpenAI clients, named
events for extensions and GET /api/events).

A live turn (`ChatTurn`) and a replayed one (an idempotent retry answered from durable
state, `TurnAnswer`) produce the same shapes, so a client cannot tell a retry's answer
from the original's.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_agent.plugins.serve.error_envelope import (
    ApiError,
    parked_error,
    stopping_error,
    storage_unavailable_error,
    turn_failure,
)


def finish_reason(result: Any) -> str:
    return "length" if result.reason == "max_steps" else "stop"


def completion_id(turn: Any) -> str:
    return f"chatcmpl-{turn.turn_id}"


def completion_body(turn: Any, model: str) -> dict[str, Any]:
    result = turn.result
    body = reply_body(completion_id(turn), turn.created, model, result.reply, finish_reason(result))
    if turn.undelivered:
        body["undelivered_steers"] = [p.view() for p in turn.undelivered]
    if turn.notices:  # beside the reply, never inside it: `content` stays the agent's words
        body["turn_notices"] = list(turn.notices)
    return body


def reply_body(completion: str, created: int, model: str, reply: str, finish: str = "stop") -> dict[str, Any]:
    return {"id": completion, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply},
                         "finish_reason": finish, "logprobs": None}]}


def chunk_body(completion: str, created: int, model: str, delta: dict[str, Any],
               finish: str | None = None) -> dict[str, Any]:
    return {"id": completion, "object": "chat.completion.chunk", "created": created, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}


def chunk(turn: Any, model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return chunk_body(completion_id(turn), turn.created, model, delta, finish)


def admission_failure(turn: Any) -> ApiError:
    """Why nothing was admitted (the route answers this instead of 200)."""
    from atomic_agent.api import (
        InvalidTextError,
        RuntimeStoppingError,
        SessionStoreError,
        SteerAlreadyTakenError,
        UnknownToolChoiceError,
    )

    exc = turn.not_admitted
    if isinstance(exc, InvalidTextError):
        return ApiError(400, str(exc), code="invalid_text")
    if isinstance(exc, UnknownToolChoiceError):  # the tool went away (an MCP server removed) after the route checked
        return ApiError(400, f"tool_choice: {turn.tool_choice!r} is not a tool of this agent any more; nothing was "
                        "written", code="unknown_tool")
    if isinstance(exc, RuntimeStoppingError):
        return stopping_error()
    if isinstance(exc, SessionStoreError):
        return storage_unavailable_error(exc)
    if isinstance(exc, SteerAlreadyTakenError):
        return ApiError(409, f"steer {turn.resend_steer_id} is no longer waiting to be re-sent: it was re-sent "
                        "already, dismissed, or made a turn of its own after a restart — it is answered there, so "
                        "do not send it again", code="steer_not_queued",
                        extra={"steerId": turn.resend_steer_id})
    if turn.crash is not None:
        return crash_error(turn)
    return ApiError(500, f"the turn was not admitted: {type(exc).__name__}: {exc}", "server_error", "not_admitted")


def crash_error(turn: Any) -> ApiError:
    from atomic_agent.api import SessionStoreError

    extra = {"undelivered_steers": [p.view() for p in turn.undelivered]} if turn.undelivered else None
    crash = turn.crash
    if turn.request_key is not None and isinstance(crash, SessionStoreError):
        # the store failed mid-turn (a failover), or another host fenced the turn out: the message
        # is kept and answered by recovery's continuation (here once the store is back, or by the
        # host that took the turn over); the keyed retry waits for that answer
        return ApiError(503, f"the session store failed during the turn ({crash}); your message is kept and will "
                        "be answered — send the request again with the same Idempotency-Key to get the answer",
                        "storage_unavailable", "storage_unavailable", extra,
                        headers={"retry-after": "1", "x-should-retry": "true"})
    return ApiError(500, f"the turn crashed: {type(turn.crash).__name__}: {turn.crash}", "server_error",
                    "turn_crashed", extra, headers={"x-should-retry": "false"})


def failure_of(turn: Any) -> ApiError | None:
    """The API error for a turn that did not end with an answer, or None."""
    extra = {"undelivered_steers": [p.view() for p in turn.undelivered]} if turn.undelivered else None
    keyed = turn.request_key is not None
    if turn.crash is not None:
        return crash_error(turn)
    if turn.parked is not None:
        return parked_error(turn.parked.turn_id, turn.session_id, started=False, keyed=keyed, extra=extra)
    result = turn.result
    if result is not None and result.status == "interrupted":
        return parked_error(result.turn_id, turn.session_id, started=True, keyed=keyed, extra=extra)
    if turn.never_started or result is None:
        return turn_failure("cancelled", "the turn was withdrawn before it started", extra)
    if result.status == "cancelled":
        how = "stopped" if result.state == "stopped" else "cancelled"
        return turn_failure("cancelled", f"the turn was {how} before it finished", extra)
    if result.status == "failed":
        message = result.error or f"the turn failed ({result.reason})"
        if turn.hint:
            message = f"{message}. {turn.hint}"
        return turn_failure(result.category or "tool", message, extra)
    return None


def answer_failure(answer: Any) -> ApiError | None:
    """The API error for a replayed turn that did not end with an answer, or None."""
    if answer.outcome == "completed":
        return None
    if answer.outcome == "gone":
        return ApiError(404, f"turn {answer.turn_id} no longer exists (its session was deleted)",
                        code="turn_not_found")
    if answer.outcome in ("stopped", "cancelled"):
        return turn_failure("cancelled", f"the turn was {answer.outcome} before it finished")
    return turn_failure(answer.category or "tool", answer.message or "the turn failed")


# Server-sent-event frames.

DONE = "data: [DONE]\n\n"
KEEP_ALIVE = ": keep-alive\n\n"  # a comment line: every SSE client skips it


def _dumps(payload: Any) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str)


def data_frame(payload: Any) -> str:
    return f"data: {_dumps(payload)}\n\n"


def event_frame(name: str, payload: Any, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {_dumps(payload)}\n\n"
