"""Answering a retried request (`Idempotency-Key`) with the turn the key already admitted.

The answer comes from the live turn when this server is still running it, else from
durable state (`runtime.answer_of`): a turn that finished before a restart, one a restart
resumed, or the continuation that answered an interrupted one. While the answer is still
owed the request waits for it, polling the ledger (another process may be running it),
unless this server is stopping (then 503 `turn_parked`, retry later with the same key).
"""

from __future__ import annotations

import asyncio
from typing import Any

from atomic_agent.plugins.serve.completion_shapes import (
    DONE,
    answer_failure,
    chunk_body,
    completion_body,
    data_frame,
    failure_of,
    reply_body,
)
from atomic_agent.plugins.serve.error_envelope import ApiError, envelope_response, parked_error

IDEMPOTENCY_HEADER = "idempotency-key"
FIRST_POLL_S = 0.02
MAX_POLL_S = 0.5


def idempotency_key(request: Any) -> str | None:
    """The request's Idempotency-Key (None without one); 400 for one that cannot be a key."""
    from atomic_agent.api import text_problem

    raw = request.headers.get(IDEMPOTENCY_HEADER)
    if raw is None:
        return None
    key = raw.strip()
    if not 1 <= len(key) <= 255 or text_problem(key) is not None:
        raise ApiError(400, "the Idempotency-Key header must be 1 to 255 characters of text (a UUID is a good "
                       "choice)", code="invalid_idempotency_key")
    return key


def request_key_for(key: str, chat: Any, session_header: str | None) -> Any:
    """The RequestKey of this request: the key and a fingerprint of what it asked."""
    from atomic_agent.api import RequestKey

    parts: tuple[str, ...] = ((session_header or "").strip(), chat.user or "", chat.text)
    if chat.tool_choice:  # only when sent: keys stored before tool_choice existed keep matching
        parts += (f"tool_choice={chat.tool_choice}",)
    return RequestKey.of(key, *parts)


def key_reused(key: str, turn_id: str, **extra: Any) -> ApiError:
    """422 for an Idempotency-Key sent again with a different request (a chat turn or a steer)."""
    return ApiError(422, f"the Idempotency-Key {key!r} was already used for a different request (turn {turn_id}); "
                    "use a new key for a new message", code="idempotency_key_reused",
                    extra={**extra, "turnId": turn_id})


async def replay(ctx: Any, existing: Any, asked: Any, stream: bool, model: str) -> Any:
    """The response the original request got (or gets, once its turn is over)."""
    from starlette.responses import JSONResponse, StreamingResponse

    if existing.fingerprint != asked.fingerprint:
        return envelope_response(key_reused(existing.key, existing.turn_id))
    headers = {"X-Atomic-Session": existing.session_id, "X-Atomic-Ledger-Turn": existing.turn_id,
               "Idempotent-Replayed": "true"}
    live = next((t for t in list(ctx.turns.values()) if t.ledger_turn_id == existing.turn_id), None)
    if live is not None:  # this server is running it right now: answer exactly as the original will be
        await live.wait()
        headers["X-Atomic-Turn"] = live.turn_id
        failure = failure_of(live)
        if failure is None and not stream:
            return JSONResponse(completion_body(live, model), headers=headers)
        created, completion, reply = live.created, f"chatcmpl-{live.turn_id}", getattr(live.result, "reply", "")
    else:
        answer = await _settled_answer(ctx, existing)
        if answer is None:
            failure = parked_error(existing.turn_id, existing.session_id, started=False, keyed=True)
            reply = ""
        else:
            failure, reply = answer_failure(answer), answer.reply
        created, completion = ctx.started_at, f"chatcmpl-{existing.caller_ref or existing.turn_id}"
        if failure is None and not stream:
            return JSONResponse(reply_body(completion, created, model, reply), headers=headers)
    if stream:
        frames = replay_chunks(completion, created, model, reply, failure.body() if failure else None)
        return StreamingResponse(iter(frames), media_type="text/event-stream",
                                 headers={**headers, "Cache-Control": "no-cache"})
    assert failure is not None
    failure.headers.update(headers)
    return envelope_response(failure)


async def _settled_answer(ctx: Any, existing: Any) -> Any:
    """The durable answer once it exists; None when this server stops first (still owed)."""
    pause = FIRST_POLL_S
    while True:
        answer = ctx.runtime.answer_of(existing.turn_id)
        if answer.settled:
            return answer
        if ctx.stopping or answer.awaits_restart:
            return None
        await asyncio.sleep(pause)
        pause = min(pause * 1.5, MAX_POLL_S)


def replay_chunks(completion: str, created: int, model: str, reply: str | None, error: dict[str, Any] | None
                  ) -> list[str]:
    """A replayed answer as the same stream a live turn would have sent."""
    frames = [data_frame(chunk_body(completion, created, model, {"role": "assistant", "content": ""}))]
    if error is not None:
        frames.append(data_frame(error))
    else:
        frames.append(data_frame(chunk_body(completion, created, model, {"content": reply or ""})))
        frames.append(data_frame(chunk_body(completion, created, model, {}, "stop")))
    return [*frames, DONE]
