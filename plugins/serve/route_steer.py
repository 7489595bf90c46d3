"""POST/GET/DELETE /api/sessions/{id}/steer: mid-turn steering and the parked hand-backs.

POST {text} folds a message into the turn running on the session: 200 {steered: true};
403 `not_your_turn` when another client started that turn (see `client_identity`);
409 when no running turn will pick it up (refused, nothing queued: send it with POST
/v1/chat/completions instead); 429 when the session's inbox is full. It never goes
through the turn queue and never pre-checks whether a turn is busy: `runtime.steer` is
the single authority, and its answer alone picks the status code. With an
`Idempotency-Key` header the key is committed with the steer: a retry (the first answer
was lost on the wire) gets 200 again with `replayed: true` and queues nothing, and the
key's turn is in `turnId`; the same key with other text is 422 `idempotency_key_reused`.

GET lists the steers turns handed back undelivered (non-destructive). DELETE
?through={seq}&discarded={n} acknowledges them by cursor and the loss count separately
(either alone is fine, at least one is required); each acknowledged steer's stored copy
(`steerId`) is dismissed — the host saw it and owns it now. To send a handed-back steer
as a turn instead, POST /v1/chat/completions with `X-Atomic-Resend-Steer: <steerId>`:
the admission consumes the stored copy, so the message is answered exactly once even if
the server restarts (re-sending the text alone would leave the stored copy for recovery
to answer a second time).
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.serve.client_identity import caller_of, may_steer
from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.idempotent_replay import idempotency_key, key_reused
from atomic_agent.plugins.serve.request_body import json_body
from atomic_agent.plugins.serve.route_sessions import require_session

_REFUSALS = {
    "no_running_turn": (409, "no running turn on session {sid} will pick this message up; it was not queued, "
                             "send it as a new turn with POST /v1/chat/completions. A steer that a turn handed "
                             "back (undelivered_steers, or GET /api/sessions/{{id}}/steer) is re-sent by its id: "
                             "POST /v1/chat/completions with the header X-Atomic-Resend-Steer: <steerId> — never "
                             "as plain text, which a restart would answer a second time"),
    "invalid_text": (400, "the steer is not valid Unicode text (it holds an unpaired surrogate); nothing was "
                          "queued"),
    "full": (429, "the steering inbox of session {sid} is full ({cap} messages wait for the next step); "
                  "retry after the turn's next step or send a new turn"),
    "too_large": (413, "the steer is too large; send long text as a new turn"),
    "empty": (400, "the steer text is empty"),
}


async def post_steer(request: Any) -> Any:
    from starlette.responses import JSONResponse

    from atomic_agent.api import MAX_PENDING_STEERS, RequestKey, SteerOutcome

    ctx = request.app.state.ctx
    session_id = request.path_params["session_id"]
    body = await json_body(request, ctx.settings.max_body_bytes)
    text = body.get("text")
    if not isinstance(text, str):
        raise ApiError(400, "the body needs a string 'text'", code="invalid_value")
    require_session(ctx, session_id)
    if not may_steer(caller_of(request, ctx.settings), ctx, session_id):
        raise ApiError(403, f"the turn running on session {session_id!r} was started by another client; only that "
                       "client (the same X-Atomic-Client) or the operator (X-Atomic-Operator) may steer it",
                       code="not_your_turn", extra={"steered": False})
    key = idempotency_key(request)
    asked = RequestKey.of(key, "steer", session_id, text) if key is not None else None
    outcome = ctx.runtime.steer(session_id, text, request_key=asked)
    if outcome.steered:
        return JSONResponse({"steered": True, "outcome": outcome.value})
    if outcome is SteerOutcome.DUPLICATE and asked is not None:
        existing = ctx.runtime.turn_for_key(asked.key)
        if existing is not None and existing.fingerprint == asked.fingerprint and existing.caller_ref.startswith(
                "steer:"):
            return JSONResponse({"steered": True, "outcome": SteerOutcome.ACCEPTED.value, "replayed": True,
                                 "turnId": existing.turn_id}, headers={"Idempotent-Replayed": "true"})
        raise key_reused(asked.key, existing.turn_id if existing is not None else "?", steered=False)
    status, template = _REFUSALS[outcome.value]
    raise ApiError(status, template.format(sid=repr(session_id), cap=MAX_PENDING_STEERS), code=outcome.value,
                   extra={"steered": False, "outcome": outcome.value})


async def get_steer(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    session_id = request.path_params["session_id"]
    require_session(ctx, session_id)
    entries, discarded = ctx.parked.read(session_id)
    return JSONResponse({"sessionId": session_id, "steers": [e.view() for e in entries], "discarded": discarded})


def _count(request: Any, name: str) -> int | None:
    raw = request.query_params.get(name)
    if raw is None:
        return None
    if not raw.isdigit():
        raise ApiError(400, f"{name} must be a non-negative integer, got {raw!r}", code="invalid_value")
    return int(raw)


async def delete_steer(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    session_id = request.path_params["session_id"]
    through, discarded = _count(request, "through"), _count(request, "discarded")
    if through is None and discarded is None:
        raise ApiError(400, "acknowledge with ?through=<last seq handled> and/or ?discarded=<loss count read>",
                       code="invalid_value")
    require_session(ctx, session_id)
    remaining, left = ctx.parked.ack(session_id, through, discarded)
    return JSONResponse({"sessionId": session_id, "remaining": remaining, "discarded": left})
