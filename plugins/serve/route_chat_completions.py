"""The OpenAI-compatible routes. POST /v1/chat/completions: every request is one agent turn
(`runtime.run_turn`), never a proxied model call. GET /v1/models: the one model this server
answers as (the agent itself).

Non-streaming answers a `chat.completion` (with `undelivered_steers` when the turn handed
steers back, and `turn_notices` [{source, text}] when plugins showed the person something as
the turn ended: the sandbox's worktree diffstat and its apply/discard commands). Streaming answers OpenAI chunks ending with `data: [DONE]`; the reply text
arrives as one content delta when the agent replies (the model's raw output is a tool-call
array, not prose). Clients that send `X-Atomic-Extensions: events` also get the agent's
events as named SSE events (`event: tool_call_started`, `event: steer_undelivered`, ...);
a vanilla stream stays strict.

Nothing is acknowledged before the message is on disk: the status line (or the stream) is
sent only once the turn is admitted; a message that cannot be admitted gets an error
envelope and nothing is written.

`Idempotency-Key: <key>` makes retries safe: the key is committed with the admission, and
a request carrying a key that already admitted a turn gets that turn's answer (waiting for
it if it is still running or queued, following it across a restart) instead of a second
turn; the same key with a different request is refused with 422. `X-Atomic-Resend-Steer:
<steerId>` sends a steer a turn handed back (`undelivered_steers[].steerId`) as this turn:
its stored copy is consumed by the admission, so it is answered once even across a
restart; a steer no longer waiting is refused with 409 `steer_not_queued`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.serve.chat_request import parse_chat_request
from atomic_agent.plugins.serve.chat_turn import END
from atomic_agent.plugins.serve.client_identity import caller_of
from atomic_agent.plugins.serve.completion_shapes import (
    DONE,
    KEEP_ALIVE,
    admission_failure,
    chunk,
    completion_body,
    data_frame,
    event_frame,
    failure_of,
    finish_reason,
)
from atomic_agent.plugins.serve.error_envelope import ApiError, envelope_response, stopping_error
from atomic_agent.plugins.serve.idempotent_replay import idempotency_key, replay, request_key_for
from atomic_agent.plugins.serve.request_body import json_body
from atomic_agent.plugins.serve.session_resolver import SESSION_HEADER, resolve_session

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

EXTENSIONS_HEADER = "x-atomic-extensions"
RESEND_STEER_HEADER = "x-atomic-resend-steer"
KEEP_ALIVE_S = 15.0


def check_tool_choice(runtime: RuntimeView, tool: str | None) -> None:
    """400 for a `tool_choice` that names no registered tool, listing near names."""
    if tool is None or tool in runtime.registry:
        return
    import difflib

    near = difflib.get_close_matches(tool, runtime.registry.names(), n=3, cutoff=0.5)
    hint = f" (did you mean {', '.join(near)}?)" if near else ""
    raise ApiError(400, f"tool_choice: {tool!r} is not a tool of this agent{hint}; `atomic-agent tools list` shows "
                   "the names (MCP tools are mcp.<server>.<tool>, GET /api/mcp/servers lists them)",
                   code="unknown_tool")


def wants_extensions(request: Any) -> bool:
    return request.headers.get(EXTENSIONS_HEADER, "").strip().lower() in ("events", "1", "true", "yes")


async def chat_completions(request: Any) -> Any:
    from starlette.responses import JSONResponse, StreamingResponse

    from atomic_agent.api import DuplicateRequestError

    ctx = request.app.state.ctx
    if ctx.stopping:
        return envelope_response(stopping_error())
    caller = caller_of(request, ctx.settings)
    chat = parse_chat_request(await json_body(request, ctx.settings.max_body_bytes))
    key = idempotency_key(request)
    session_header = request.headers.get(SESSION_HEADER)
    model = chat.model or ctx.settings.model_name
    if key is not None:
        existing = ctx.runtime.turn_for_key(key)
        if existing is not None:  # a retry: the original turn's answer, never a second turn
            return await replay(ctx, existing, request_key_for(key, chat, session_header), chat.stream, model)
    check_tool_choice(ctx.runtime, chat.tool_choice)  # before a session is resolved or anything is written
    session_id = resolve_session(ctx, session_header, chat.user)
    resend = (request.headers.get(RESEND_STEER_HEADER) or "").strip() or None
    turn = ctx.start_turn(session_id, chat.text, resend_steer_id=resend, client=caller.client,
                          request_key=request_key_for(key, chat, session_header) if key else None,
                          tool_choice=chat.tool_choice)
    headers = {"X-Atomic-Session": session_id, "X-Atomic-Turn": turn.turn_id}
    if not await turn.admitted():  # nothing was written: say why, and acknowledge nothing
        if isinstance(turn.not_admitted, DuplicateRequestError):  # the same key raced in: answer that turn
            return await replay(ctx, turn.not_admitted.existing, request_key_for(key or "", chat, session_header),
                                chat.stream, model)
        error = admission_failure(turn)
        error.headers.update(headers)
        return envelope_response(error)
    if resend is not None:
        ctx.parked.forget_steer(session_id, resend)  # re-sent: its parked copy is not the host's to handle any more
    headers["X-Atomic-Ledger-Turn"] = turn.ledger_turn_id or ""
    if chat.stream:
        return StreamingResponse(_stream(turn, model, wants_extensions(request)), media_type="text/event-stream",
                                 headers={**headers, "Cache-Control": "no-cache"})
    await turn.wait()
    failure = failure_of(turn)
    if failure is not None:
        failure.headers.update(headers)
        return envelope_response(failure)
    return JSONResponse(completion_body(turn, model), headers=headers)


async def _stream(turn: Any, model: str, extensions: bool) -> AsyncIterator[str]:
    # this generator stops when the client goes away; the turn runs on in its own task
    yield data_frame(chunk(turn, model, {"role": "assistant", "content": ""}))
    while True:
        try:
            event = await asyncio.wait_for(turn.queue.get(), KEEP_ALIVE_S)
        except TimeoutError:
            yield KEEP_ALIVE
            continue
        if event is END:
            break
        if extensions:
            yield event_frame(event["type"], event)
        if event["type"] == "assistant_reply":
            yield data_frame(chunk(turn, model, {"content": event["text"]}))
    failure = failure_of(turn)
    if failure is not None:
        body = failure.body()
        if extensions and turn.result is not None and turn.result.category:
            body["category"] = turn.result.category
        yield data_frame(body)
    else:
        yield data_frame(chunk(turn, model, {}, finish_reason(turn.result)))
    yield DONE


async def list_models(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    model = {"id": ctx.settings.model_name, "object": "model", "created": ctx.started_at, "owned_by": "atomic-agent"}
    return JSONResponse({"object": "list", "data": [model]})
