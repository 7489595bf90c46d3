"""An httpx transport that gives back the pool slots a cancelled request strands.

httpcore 1.0.9's connection pool loses a connection when a request is cancelled in the
short stretch between the pool handing it a fresh connection and the first byte of the
request going out (waiting for the assignment event, or for the connection's state lock
once the socket is open). The connection is then neither idle, closed nor expired, so the
pool never reaps it, and it is not "available" either (an HTTP/1.1 connection in state NEW
only serves the request that opened it), so it is never reused: each one holds a pool slot,
and usually an open socket, until the process ends. Cancelling requests is routine here (the
next turn of a session aborts its memory reflection, `asyncio.wait_for` times calls out), so
the slots ran out after a few hundred turns and every later request waited out the pool
timeout. Upstream: encode/httpcore#1093 (open; unreleased fixes in #1094, #1099).

A cancel that lands while the response is being closed (the pool's "shield" is an anyio one,
which a plain `Task.cancel()` goes through) strands the other way: the pool keeps the
finished request on its books, owning a connection left ACTIVE, for good.

`ReclaimingTransport` wraps another transport and knows which of its requests are still in
flight (sent and not yet closed). Whenever one ends with an exception (a cancel included)
it forgets the pool's entries for requests that are no longer in flight, then closes and
drops every pooled connection that no request owns and that is neither idle nor closed,
the invariant the upstream fixes add to the pool. All of that bookkeeping happens in one
synchronous step, so a concurrent request never loses the connection it was handed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx


def stranded_connections(pool: Any, in_flight: Mapping[int, object]) -> tuple[list[Any], list[Any]]:
    """(the pool's request entries for requests no longer in flight, the connections that no
    other entry owns and that the pool would never reap or reuse). `in_flight` is keyed by
    the id of each live request's `extensions` dict (httpx hands that very dict to httpcore)."""
    requests = list(getattr(pool, "_requests", ()))
    dead = [entry for entry in requests if id(getattr(entry.request, "extensions", None)) not in in_flight]
    owned = {id(entry.connection) for entry in requests if entry not in dead}
    stranded = [conn for conn in getattr(pool, "_connections", ())
                if id(conn) not in owned and not conn.is_idle() and not conn.is_closed()]
    return dead, stranded


async def reclaim_stranded(pool: Any, in_flight: Mapping[int, object]) -> int:
    """Forget `pool`'s dead request entries, drop its stranded connections, hand the freed
    slots to requests queued for one, then close what was dropped; how many were stranded."""
    dead, stranded = stranded_connections(pool, in_flight)
    if not dead and not stranded:
        return 0
    # one synchronous step (httpcore keeps no public way to do this): a second cancel
    # arriving while the connections close cannot put anything back
    for entry in dead:
        pool._requests.remove(entry)
    for conn in stranded:
        pool._connections.remove(conn)
    assign = getattr(pool, "_assign_requests_to_connections", None)
    closing = [*stranded, *(assign() if assign is not None else ())]
    for conn in closing:
        try:
            await conn.aclose()  # the socket is shut before aclose first suspends
        except Exception:
            pass  # a connection that fails to close is out of the pool all the same
    return len(stranded)


class _TrackedBody(httpx.AsyncByteStream):
    """A response body whose close tells the transport the request is over."""

    def __init__(self, inner: httpx.AsyncByteStream, transport: ReclaimingTransport, key: int) -> None:
        self._inner = inner
        self._transport = transport
        self._key = key

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        except BaseException:
            await self._transport.finished(self._key, failed=True)
            raise
        await self._transport.finished(self._key, failed=False)


class ReclaimingTransport(httpx.AsyncBaseTransport):
    """`inner` (the llama clients pass `llama_client.server_transport`, httpx's pooled HTTP
    transport), reclaiming stranded pool slots whenever a request fails or is cancelled.
    `reclaimed` counts the connections."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.reclaimed = 0
        self._in_flight: dict[int, httpx.Request] = {}  # id(request.extensions) -> request (keeps the id valid)

    @property
    def pool(self) -> Any | None:
        """The httpcore pool under `inner`, when it has one (a mock transport has none)."""
        return getattr(self.inner, "_pool", None)

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    async def reclaim(self) -> int:
        pool = self.pool
        count = await reclaim_stranded(pool, self._in_flight) if pool is not None else 0
        self.reclaimed += count
        return count

    async def finished(self, key: int, *, failed: bool) -> None:
        self._in_flight.pop(key, None)
        if failed:
            await self.reclaim()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        key = id(request.extensions)
        self._in_flight[key] = request
        try:
            response = await self.inner.handle_async_request(request)
        except BaseException:
            await self.finished(key, failed=True)
            raise
        if isinstance(response.stream, httpx.AsyncByteStream):
            response.stream = _TrackedBody(response.stream, self, key)
        else:  # nothing to close through us: the request is over as far as we can tell
            self._in_flight.pop(key, None)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
