"""GET /api/events: an SSE stream of runtime events (turn events, approval requests and
resolutions, parked steers), optionally for one session (`?session=<id>`). Approval
events reach only the callers that may answer them (see `client_identity`).

On connect the approvals still pending are sent first, so a client that (re)connects
never misses a prompt. A client too slow to keep up gets an `error` event and the stream
ends; it reconnects. When the server stops, the stream ends with an `error` event of code
`server_stopping` (after the events already queued for it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from atomic_agent.plugins.serve.client_identity import Caller, caller_of, visible
from atomic_agent.plugins.serve.completion_shapes import KEEP_ALIVE, event_frame

KEEP_ALIVE_S = 15.0


async def events(request: Any) -> Any:
    from starlette.responses import StreamingResponse

    ctx = request.app.state.ctx
    caller = caller_of(request, ctx.settings)
    session_id = request.query_params.get("session") or None
    subscriber = ctx.hub.subscribe(session_id)  # before the replay: nothing falls in between
    replay = [e for e in ctx.approvals.pending() if subscriber.wants(e) and visible(caller, ctx, e)]
    return StreamingResponse(_frames(ctx, subscriber, replay, caller), media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache"})


async def _frames(ctx: Any, subscriber: Any, replay: list[dict[str, Any]], caller: Caller) -> AsyncIterator[str]:
    counter = 0
    try:
        yield ": connected\n\n"
        for event in replay:
            counter += 1
            yield event_frame(event["type"], event, counter)
        while True:
            if subscriber.overflowed and subscriber.queue.empty():
                yield event_frame("error", {"type": "error", "code": "events_overflow",
                                            "message": "this client fell too far behind; reconnect to resume "
                                                       "(pending approvals are replayed)"})
                return
            if ctx.stopping and subscriber.queue.empty():
                yield event_frame("error", {"type": "error", "code": "server_stopping",
                                            "message": "the server is stopping; reconnect once it has restarted"})
                return
            getter = asyncio.ensure_future(subscriber.queue.get())
            stop = asyncio.ensure_future(ctx.stopped.wait())
            try:
                await asyncio.wait({getter, stop}, timeout=KEEP_ALIVE_S, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                if not getter.done():
                    getter.cancel()
            if not getter.done() or getter.cancelled():
                if not ctx.stopping:
                    yield KEEP_ALIVE
                continue
            event = getter.result()
            if not visible(caller, ctx, event):
                continue
            counter += 1
            yield event_frame(event["type"], event, counter)
    finally:
        ctx.hub.unsubscribe(subscriber)
