"""The one module that imports the `mcp` SDK: transports, the client session, and the
conversions between SDK types and the plugin's neutral records (`mcp_records`).

A connection is owned by one asyncio task that enters the transport and the session and
leaves them again (the SDK's anyio scopes must be entered and exited by the same task);
every other task talks to the server through the session's requests. The owner task
lives until `close()` or until the transport dies; either way `closed` is set and calls
fail fast with McpServerUnavailable instead of hanging.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO

from atomic_agent.plugins.mcp.mcp_errors import (
    McpConnectError,
    McpRequestError,
    McpServerUnavailable,
    describe_exception,
    scrub,
)
from atomic_agent.plugins.mcp.mcp_records import (
    Catalog,
    ContentPart,
    PromptArgumentMeta,
    PromptMeta,
    PromptResult,
    ResourceMeta,
    SamplingMessage,
    SamplingReply,
    SamplingRequest,
    ToolCallResult,
    ToolMeta,
)
from atomic_agent.plugins.mcp.server_config import SSE, STDIO, ServerConfig

MAX_PAGES = 50  # a server that paginates for ever is cut off here
# more tools than any prompt could list: a server advertising 100,000 took ~100 s to absorb
MAX_CATALOG_ITEMS = 1000
CLIENT_NAME = "atomic-agent"

SamplingHandler = Callable[[SamplingRequest], Awaitable[SamplingReply]]
ChangeHandler = Callable[[], None]


class SdkConnection:
    """One initialised MCP session with one server."""

    def __init__(self, server: ServerConfig, env: Mapping[str, str], *, on_sampling: SamplingHandler | None,
                 on_tools_changed: ChangeHandler | None = None, errlog: TextIO | None = None) -> None:
        self.server = server
        self._env = dict(env)
        self._on_sampling = on_sampling
        self._on_tools_changed = on_tools_changed
        self._errlog = errlog
        self._session: Any = None
        self._owner: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._lost = asyncio.Event()  # the transport's read side ended (the server went away)
        self.closed = asyncio.Event()
        self.failure: str | None = None  # why the connection ended or never came up
        self.server_info: str | None = None
        self.capabilities: dict[str, bool] = {}
        self._listings = _ToolListingTap()

    # -- lifecycle -----------------------------------------------------------------------------
    async def open(self) -> None:
        """Start the transport, run the handshake; McpConnectError within connect_timeout_s."""
        self._owner = asyncio.get_running_loop().create_task(self._own(), name=f"mcp:{self.server.name}")
        waiter = asyncio.ensure_future(self._ready.wait())
        ended = asyncio.ensure_future(self.closed.wait())
        try:
            done, _ = await asyncio.wait({waiter, ended}, timeout=self.server.connect_timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            # the caller's own task was cancelled: the owner must not go on connecting without
            # it, or a stdio server it starts runs on with nobody left to close it
            self._owner.cancel()
            await asyncio.gather(self._owner, return_exceptions=True)
            raise
        finally:
            waiter.cancel()
            ended.cancel()
        if self._ready.is_set() and not self.closed.is_set():
            return
        if not done:
            self.failure = (f"no answer to the MCP handshake within {self.server.connect_timeout_s} s "
                            "(transport.connectTimeoutS)")
        await self.close()
        raise McpConnectError(self.failure or "the connection closed during the handshake")

    async def close(self) -> None:
        """Leave the session and the transport (stops a stdio server). Idempotent."""
        self._stop.set()
        owner = self._owner
        if owner is None or owner.done():
            self.closed.set()
            return
        try:
            await asyncio.wait_for(asyncio.shield(owner), timeout=5)
        except (TimeoutError, asyncio.TimeoutError):
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner
        except BaseException:  # noqa: BLE001 - the owner records its own failure
            pass
        self.closed.set()

    async def _own(self) -> None:
        from mcp import ClientSession

        try:
            async with contextlib.AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport())
                read = _EndOfStreamWatch(read, self._lost.set, self._listings.incoming)
                write = _OutgoingWatch(write, self._listings.outgoing)
                callback = self._sampling_callback if self._on_sampling is not None else None
                session = ClientSession(read, write, sampling_callback=callback, message_handler=self._on_message,
                                        client_info=_client_info())
                session = await stack.enter_async_context(session)
                result = await session.initialize()
                info = result.server_info
                self.server_info = f"{info.name} {info.version}".strip() if info is not None else None
                caps = result.capabilities
                self.capabilities = {"tools": caps.tools is not None, "resources": caps.resources is not None,
                                     "prompts": caps.prompts is not None}
                self._session = session
                self._ready.set()
                stop = asyncio.ensure_future(self._stop.wait())
                lost = asyncio.ensure_future(self._lost.wait())
                try:
                    await asyncio.wait({stop, lost}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    lost.cancel()
                if self._lost.is_set() and not self._stop.is_set() and self.failure is None:
                    self.failure = "the server closed the connection (for a stdio server: the process exited)"
        except asyncio.CancelledError:
            if self.failure is None:
                self.failure = "cancelled"
        except BaseException as exc:  # noqa: BLE001 - any transport failure ends this connection only
            self.failure = describe_exception(exc)
        finally:
            self._session = None
            self.closed.set()

    def _transport(self) -> Any:
        transport = self.server.transport
        if transport.kind == STDIO:
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=transport.command, args=list(transport.args), env=self._env,
                                           cwd=transport.cwd or None)
            return stdio_client(params, errlog=self._errlog) if self._errlog is not None else stdio_client(params)
        if transport.kind == SSE:
            from mcp.client.sse import sse_client

            return sse_client(transport.url, headers=dict(transport.headers) or None,
                              timeout=float(self.server.connect_timeout_s))
        return _streamable(transport.url, dict(transport.headers), float(self.server.connect_timeout_s))

    # -- requests ------------------------------------------------------------------------------
    def _live(self) -> Any:
        session = self._session
        if session is None or self.closed.is_set():
            raise McpServerUnavailable(f"server {self.server.name!r} is not connected"
                                       + (f" ({self.failure})" if self.failure else ""))
        return session

    async def _request(self, what: str, call: Callable[[Any], Awaitable[Any]], timeout_s: float) -> Any:
        session = self._live()
        request = asyncio.ensure_future(call(session))
        ended = asyncio.ensure_future(self.closed.wait())
        try:
            done, _ = await asyncio.wait({request, ended}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            request.cancel()
            raise
        finally:
            ended.cancel()
        if request not in done:
            request.cancel()
            with contextlib.suppress(BaseException):
                await request
            if self.closed.is_set():
                raise McpServerUnavailable(f"server {self.server.name!r} went away during {what}"
                                           + (f" ({self.failure})" if self.failure else ""))
            raise McpRequestError(f"{what} on {self.server.name!r} got no answer within {timeout_s:g} s")
        try:
            return request.result()
        except McpServerUnavailable:
            raise
        except Exception as exc:
            if self.server.transport.kind != STDIO and session_is_unknown(exc):
                # the server restarted (or expired the session): this connection can never work
                # again, so end it; the manager marks the server down and reconnects, which
                # starts a new session. The request was refused, not run.
                self.failure = (f"the server no longer knows this session ({describe_exception(exc)}); "
                                "it was restarted or expired the session, so a new one is started")
                await self.close()
                raise McpServerUnavailable(f"{what} on {self.server.name!r} was not run: {self.failure}") from None
            raise McpRequestError(f"{what} on {self.server.name!r} failed: {describe_exception(exc)}") from None

    async def catalog(self) -> Catalog:
        timeout = float(self.server.call_timeout_s)
        self._listings.hints.clear()
        tools = await self._request("tools/list", _paged("list_tools", "tools"), timeout) \
            if self.capabilities.get("tools") else []
        hints = dict(self._listings.hints)
        resources = await self._request("resources/list", _paged("list_resources", "resources"), timeout) \
            if self.capabilities.get("resources") else []
        prompts = await self._request("prompts/list", _paged("list_prompts", "prompts"), timeout) \
            if self.capabilities.get("prompts") else []
        return Catalog(tuple(_tool_meta(t, hints.get(t.name, _ABSENT)) for t in tools), tuple(_resource_meta(r) for r in resources),
                       tuple(_prompt_meta(p) for p in prompts))

    async def call_tool(self, name: str, args: Mapping[str, Any], timeout_s: float) -> ToolCallResult:
        result = await self._request(f"tools/call {name}",
                                     lambda s: s.call_tool(name, dict(args), read_timeout_seconds=timeout_s),
                                     timeout_s)
        return ToolCallResult(tuple(_part(block) for block in (result.content or [])), bool(result.is_error),
                              result.structured_content)

    async def read_resource(self, uri: str) -> tuple[ContentPart, ...]:
        result = await self._request(f"resources/read {uri}", lambda s: s.read_resource(uri),
                                     float(self.server.call_timeout_s))
        return tuple(_resource_part(c) for c in result.contents)

    async def get_prompt(self, name: str, args: Mapping[str, str]) -> PromptResult:
        result = await self._request(f"prompts/get {name}", lambda s: s.get_prompt(name, dict(args)),
                                     float(self.server.call_timeout_s))
        return PromptResult(result.description or "", tuple((m.role, _part(m.content)) for m in result.messages))

    # -- server-initiated traffic ------------------------------------------------------------
    async def _sampling_callback(self, context: Any, params: Any) -> Any:
        from mcp import types

        try:
            request = _sampling_request(self.server.name, params)
            assert self._on_sampling is not None
            reply = await self._on_sampling(request)
        except Exception as exc:  # never raise into the transport: the server gets a JSON-RPC error
            return types.ErrorData(code=types.INTERNAL_ERROR, message=scrub(str(exc) or type(exc).__name__))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=reply.text),
                                         model=reply.model, stop_reason=reply.stop_reason)

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        if isinstance(message, Exception):
            self.failure = describe_exception(message)
            return
        root = getattr(message, "root", message)
        if isinstance(root, types.ToolListChangedNotification) and self._on_tools_changed is not None:
            self._on_tools_changed()  # schedules a refresh; never awaits a request from inside the dispatcher


_ABSENT = object()  # the tool's raw listing carried no readOnlyHint (or was never seen)


class _ToolListingTap:
    """The `readOnlyHint` of each tool exactly as the server's JSON carried it.

    The SDK validates a tools/list answer into pydantic models that coerce the hint (the
    string "true", or 1, becomes True), and a hint is what lets a tool skip the approval
    question; so the raw answers are read off the wire here, matched to our own tools/list
    requests by id, and only a real JSON boolean is believed (`_tool_meta`).
    """

    def __init__(self) -> None:
        self._asked: set[Any] = set()  # ids of tools/list requests still unanswered
        self.hints: dict[str, Any] = {}  # tool name -> raw hint, the first listing of a name wins

    def outgoing(self, item: Any) -> None:
        message = getattr(item, "message", None)
        rid = getattr(message, "id", None)
        if rid is not None and getattr(message, "method", None) == "tools/list":
            self._asked.add(rid)

    def incoming(self, item: Any) -> None:
        message = getattr(item, "message", None)
        rid = getattr(message, "id", None)
        if rid is None or rid not in self._asked or getattr(message, "method", None) is not None:
            return
        self._asked.discard(rid)
        result = getattr(message, "result", None)
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            annotations = tool.get("annotations")
            raw = annotations.get("readOnlyHint", _ABSENT) if isinstance(annotations, dict) else _ABSENT
            self.hints.setdefault(tool["name"], raw)


class _OutgoingWatch:
    """The transport's write stream, showing each message to `on_send` before it goes out."""

    def __init__(self, inner: Any, on_send: Callable[[Any], None]) -> None:
        self._inner = inner
        self._on_send = on_send

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> _OutgoingWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)

    async def send(self, item: Any) -> None:
        self._on_send(item)
        await self._inner.send(item)

    def send_nowait(self, item: Any) -> None:
        self._on_send(item)
        self._inner.send_nowait(item)


class _EndOfStreamWatch:
    """The transport's read stream, telling the connection when it ends (EOF or closed) and
    showing each message to `on_item` first."""

    def __init__(self, inner: Any, on_end: Callable[[], None],
                 on_item: Callable[[Any], None] = lambda item: None) -> None:
        self._inner = inner
        self._on_end = on_end
        self._on_item = on_item

    def __getattr__(self, name: str) -> Any:  # last_context and friends
        return getattr(self._inner, name)

    async def __aenter__(self) -> _EndOfStreamWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        self._on_end()
        return await self._inner.__aexit__(*exc)

    def __aiter__(self) -> _EndOfStreamWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            item = await self._inner.__anext__()
        except BaseException:
            self._on_end()
            raise
        self._on_item(item)
        return item

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except BaseException:
            self._on_end()
            raise
        self._on_item(item)
        return item

    async def aclose(self) -> None:
        self._on_end()
        await self._inner.aclose()


def _client_info() -> Any:
    from mcp import types

    from atomic_agent import __version__

    return types.Implementation(name=CLIENT_NAME, version=__version__)


@contextlib.asynccontextmanager
async def _streamable(url: str, headers: dict[str, str], connect_timeout_s: float) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(connect_timeout_s, read=300.0)
    async with httpx2.AsyncClient(headers=headers, timeout=timeout, follow_redirects=False) as client:
        async with streamable_http_client(url, http_client=client) as streams:
            yield streams[0], streams[1]


def session_is_unknown(exc: BaseException) -> bool:
    """Whether a failed request says the server does not know our session id: its own
    "Session not found" error, or the SDK's "Session terminated" for an HTTP 404."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).lower()
    return "session" in text and any(word in text for word in ("not found", "terminated", "unknown", "expired",
                                                                "invalid session", "no valid session"))


def _paged(method: str, field: str) -> Callable[[Any], Awaitable[list[Any]]]:
    async def fetch(session: Any) -> list[Any]:
        from mcp import types

        items: list[Any] = []
        cursor = None
        for _ in range(MAX_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await getattr(session, method)(params=params)
            items.extend(getattr(page, field) or [])
            if len(items) > MAX_CATALOG_ITEMS:
                raise McpRequestError(f"the server lists more than {MAX_CATALOG_ITEMS:,} {field}; a catalogue that "
                                      f"large is refused whole (no prompt could show it). Point the server at "
                                      f"fewer {field} in its own settings")
            cursor = page.next_cursor
            if not cursor:
                break
        return items

    return fetch


def _tool_meta(tool: Any, raw_hint: Any) -> ToolMeta:
    """`raw_hint` is the hint as the JSON carried it: the SDK's parsed value is not trusted
    (it turns "true" and 1 into True), and a hint never seen on the wire counts as absent."""
    notice = None
    if isinstance(raw_hint, bool):
        hint: bool | None = raw_hint
    else:
        hint = None
        if raw_hint is not _ABSENT and raw_hint is not None:
            notice = (f"tool {tool.name!r}: readOnlyHint is {json.dumps(raw_hint, default=str)[:40]}, not a JSON boolean; it is "
                      "ignored and the tool asks before it runs (the server should send true or false)")
    return ToolMeta(name=tool.name, description=tool.description or "", input_schema=dict(tool.input_schema or {}),
                    read_only_hint=hint, title=tool.title, notice=notice)


def _resource_meta(resource: Any) -> ResourceMeta:
    return ResourceMeta(uri=str(resource.uri), name=resource.name, description=resource.description or "",
                        mime_type=resource.mime_type)


def _prompt_meta(prompt: Any) -> PromptMeta:
    arguments = tuple(PromptArgumentMeta(a.name, a.description or "", bool(a.required))
                      for a in (prompt.arguments or []))
    return PromptMeta(prompt.name, prompt.description or "", arguments)


def _part(block: Any) -> ContentPart:
    kind = getattr(block, "type", "")
    if kind == "text":
        return ContentPart("text", block.text)
    if kind in ("image", "audio"):
        size = len(block.data or "") * 3 // 4
        return ContentPart(kind, f"[{kind} {block.mime_type}, about {size} bytes]", mime_type=block.mime_type)
    if kind == "resource":
        return _resource_part(block.resource)
    if kind == "resource_link":
        return ContentPart("link", f"[resource {block.uri}]", uri=str(block.uri))
    return ContentPart("other", f"[{kind or 'unknown'} content]")


def _resource_part(contents: Any) -> ContentPart:
    text = getattr(contents, "text", None)
    mime = getattr(contents, "mime_type", None)
    if isinstance(text, str):
        return ContentPart("resource", text, mime_type=mime, uri=str(contents.uri))
    size = len(getattr(contents, "blob", "") or "") * 3 // 4
    return ContentPart("resource", f"[binary resource {contents.uri} {mime or ''}, about {size} bytes]".replace(" ,", ","),
                       mime_type=mime, uri=str(contents.uri))


def _sampling_request(server: str, params: Any) -> SamplingRequest:
    messages = []
    for message in params.messages:
        content = message.content
        blocks = content if isinstance(content, list) else [content]
        texts = [b.text for b in blocks if getattr(b, "type", "") == "text"]
        if not texts:
            raise ValueError("only text content can be sampled by this client")
        messages.append(SamplingMessage(str(message.role), "\n".join(texts)))
    return SamplingRequest(server=server, messages=tuple(messages), max_tokens=int(params.max_tokens),
                           system_prompt=params.system_prompt, temperature=params.temperature,
                           stop=tuple(params.stop_sequences or ()))
