"""OpenAI shapes of a turn's outcome: chat.completion, chat.completion.chunk, or an error."""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.http.error_envelope import ApiError, turn_failure


def finish_reason(result: Any) -> str:
    return "length" if result.reason == "max_steps" else "stop"


def completion_body(turn: Any, model: str) -> dict[str, Any]:
    result = turn.result
    body: dict[str, Any] = {
        "id": f"chatcmpl-{turn.turn_id}", "object": "chat.completion", "created": turn.created, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": result.reply},
                     "finish_reason": finish_reason(result), "logprobs": None}],
    }
    if turn.undelivered:
        body["undelivered_steers"] = [p.view() for p in turn.undelivered]
    return body


def chunk(turn: Any, model: str, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": f"chatcmpl-{turn.turn_id}", "object": "chat.completion.chunk", "created": turn.created,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}


def failure_of(turn: Any) -> ApiError | None:
    """The API error for a turn that did not end with an answer, or None."""
    extra = {"undelivered_steers": [p.view() for p in turn.undelivered]} if turn.undelivered else None
    if turn.crash is not None:
        return ApiError(500, f"the turn crashed: {type(turn.crash).__name__}: {turn.crash}", "server_error",
                        "turn_crashed", extra, headers={"x-should-retry": "false"})
    if turn.never_started or turn.result is None or turn.result.status == "cancelled":
        return turn_failure("cancelled", "the turn was cancelled before it finished (the server is stopping)", extra)
    result = turn.result
    if result.status == "failed":
        message = result.error or f"the turn failed ({result.reason})"
        if turn.hint:
            message = f"{message}. {turn.hint}"
        return turn_failure(result.category or "tool", message, extra)
    return None
