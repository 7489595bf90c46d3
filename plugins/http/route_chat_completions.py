"""POST /v1/chat/completions: every request is one agent turn (`runtime.run_turn`), never a
proxied model call.

Non-streaming answers a `chat.completion` (with `undelivered_steers` when the turn handed
steers back). Streaming answers OpenAI chunks ending with `data: [DONE]`; the reply text
arrives as one content delta when the agent replies (the model's raw output is a tool-call
array, not prose). Clients that send `X-Atomic-Extensions: events` also get the agent's
events as named SSE events (`event: tool_call_started`, `event: steer_undelivered`, ...);
a vanilla stream stays strict.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from atomic_agent.plugins.http.chat_request import parse_chat_request
from atomic_agent.plugins.http.chat_turn import END
from atomic_agent.plugins.http.client_identity import caller_of
from atomic_agent.plugins.http.completion_shapes import chunk, completion_body, failure_of, finish_reason
from atomic_agent.plugins.http.error_envelope import envelope_response
from atomic_agent.plugins.http.request_body import json_body
from atomic_agent.plugins.http.session_resolver import SESSION_HEADER, resolve_session
from atomic_agent.plugins.http.sse_frames import DONE, KEEP_ALIVE, data_frame, event_frame

EXTENSIONS_HEADER = "x-atomic-extensions"
KEEP_ALIVE_S = 15.0


def wants_extensions(request: Any) -> bool:
    return request.headers.get(EXTENSIONS_HEADER, "").strip().lower() in ("events", "1", "true", "yes")


async def chat_completions(request: Any) -> Any:
    from starlette.responses import JSONResponse, StreamingResponse

    ctx = request.app.state.ctx
    caller = caller_of(request, ctx.settings)
    chat = parse_chat_request(await json_body(request, ctx.settings.max_body_bytes))
    session_id = resolve_session(ctx, request.headers.get(SESSION_HEADER), chat.user)
    model = chat.model or ctx.settings.model_name
    turn = ctx.start_turn(session_id, chat.text, caller.client)
    headers = {"X-Atomic-Session": session_id, "X-Atomic-Turn": turn.turn_id}
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
