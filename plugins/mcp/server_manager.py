"""McpManager: one connection per configured server, their catalogs, and the live tool group.

Always built (even with no servers: then it costs nothing and `mcp add` can still connect
one live). `start` connects every enabled server concurrently, each isolated: a server
that fails is `down` with a scrubbed `lastError` and the rest run. The tools of every
server are published as the registry's live group `mcp`, so the next step's stable prefix
and grammar are rebuilt from exactly the connected set; `add_live` / `remove_live` change
that set while the runtime runs and are idempotent on the server name. A server's
`notifications/tools/list_changed` refreshes its catalog. Tool definitions pass the drift
check (`drift_store`) before they are published.

Hosts (sidecar, serve) `subscribe` to what changes while they run: `mcp_server_up` (a
server connected: its tools and drifted tools), `mcp_server_down` (a connect failed or a
connection was lost: `lastError`, and `retryInS` while a reconnect is planned) and
`mcp_tool_drift` (tools newly held back until the operator approves them). The state at any
moment is `statuses()`; events carry only changes.

A lost connection is retried `reconnectAttempts` times (1, 2, 4 … 60 s apart); the tools
stay published meanwhile (a call answers that the server is down), so the prompt's prefix
does not churn while a server restarts. A reconnected server's catalog passes the drift
check again. `refresh` of a down server reconnects it at once (a host re-adding the
server with replace does the same).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from atomic_agent.plugins.mcp.aggregate_tools import aggregate_tool_specs
from atomic_agent.plugins.mcp.config_persistence import ConfigPersistence
from atomic_agent.plugins.mcp.drift_store import DriftStore
from atomic_agent.plugins.mcp.mcp_errors import McpServerUnavailable, describe_exception
from atomic_agent.plugins.mcp.mcp_records import (
    CONNECTING,
    DISABLED,
    DOWN,
    INVALID,
    UP,
    Catalog,
    ContentPart,
    PromptMeta,
    PromptResult,
    ResourceMeta,
    ServerStatus,
    ToolCallResult,
    ToolMeta,
)
from atomic_agent.plugins.mcp.sdk_connection import SamplingHandler, SdkConnection
from atomic_agent.plugins.mcp.server_config import STDIO, ServerConfig, duplicate_names, server_problem
from atomic_agent.plugins.mcp.tool_adapter import (
    MAX_SCHEMA_BYTES,
    CredentialReads,
    build_tool_spec,
    schema_problem,
    schema_size,
)
from atomic_agent.plugins.mcp.tool_names import qualify, tool_name_problem
from atomic_agent.plugins.mcp.url_policy import check_server_url

LIVE_GROUP = "mcp"
EventSink = Callable[[str, dict[str, Any]], None]
MAX_RECONNECT_DELAY_S = 60.0
HOST_EVENTS = frozenset({"mcp_server_up", "mcp_server_down", "mcp_tool_drift"})  # what hosts relay


@attrs.define
class ServerEntry:
    config: ServerConfig
    status: str
    connection: SdkConnection | None = None
    catalog: Catalog = attrs.field(factory=Catalog)
    accepted: tuple[ToolMeta, ...] = ()
    drifted: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    last_error: str | None = None
    watcher: asyncio.Task[None] | None = None
    refreshing: asyncio.Task[None] | None = None
    refresh_again: bool = False
    errlog: TextIO | None = None
    reconnecting: asyncio.Task[None] | None = None


class McpManager:
    def __init__(self, *, registry: Any, state_dir: Path, environ: Mapping[str, str] | None = None,
                 sampling: SamplingHandler | None = None, max_result_chars: int = 64_000,
                 persistence: ConfigPersistence | None = None, sensitive: CredentialReads | None = None,
                 shared_database: Any = None) -> None:
        self.registry = registry
        self.sensitive = sensitive  # after a credential read, every MCP call asks (sensitive_egress)
        self.persistence = persistence
        self.state_dir = state_dir
        self.environ = environ
        self.sampling = sampling
        self.max_result_chars = max_result_chars
        self.drift = DriftStore.open(state_dir, shared_database)  # the fleet's approvals on its database
        self.listeners: list[EventSink] = []
        self._entries: dict[str, ServerEntry] = {}
        self._rejected: list[ServerStatus] = []
        self._lock = asyncio.Lock()
        self._closed = False
        self.reconnect_base_s = 1.0  # the first retry's delay; doubles per attempt up to a minute

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self, servers: Sequence[ServerConfig]) -> None:
        """Connect every enabled server of the config (concurrently, each isolated)."""
        later = duplicate_names(tuple(servers))
        for index, server in enumerate(servers):
            if index in later:
                self._rejected.append(ServerStatus(server.name, INVALID, server.transport.kind, server.trust,
                                                   last_error=f"duplicate server name {server.name!r} in "
                                                   f"mcp.servers[{index}]; the first entry with this name is used"))
                continue
            self._entries[server.name] = self._new_entry(server)
        async with self._lock:
            await asyncio.gather(*(self._connect(e) for e in self._entries.values() if e.status == CONNECTING))
            self._publish()

    async def close(self) -> None:
        """Disconnect every server and withdraw every MCP tool. Idempotent."""
        self._closed = True
        entries = list(self._entries.values())
        await asyncio.gather(*(self._disconnect(e) for e in entries), return_exceptions=True)
        with contextlib.suppress(Exception):
            self.registry.set_live_tools(LIVE_GROUP, [])

    # -- live change (variant γ) ---------------------------------------------------------------
    async def add_live(self, server: ServerConfig) -> ServerStatus:
        """Connect `server` and publish its tools; an existing name is left alone (idempotent)."""
        async with self._lock:
            existing = self._entries.get(server.name)
            if existing is not None:
                return self._status(existing)
            entry = self._new_entry(server)
            self._entries[server.name] = entry
            if entry.status == CONNECTING:
                await self._connect(entry)
            self._publish()
            return self._status(entry)

    async def remove_live(self, name: str) -> bool:
        """Disconnect `name` and withdraw its tools; False when there was no such server."""
        async with self._lock:
            entry = self._entries.pop(name, None)
            if entry is None:
                return False
            await self._disconnect(entry)
            self._publish()
            return True

    async def add_server(self, server: ServerConfig, replace: bool = False) -> ServerStatus:
        """`mcp add` in a running host: persist to config.json first, then connect live.

        A fresh add is the operator accepting the server's catalog as it is now (drift
        records of an earlier server with this name are dropped).
        """
        if self.persistence is None:
            raise RuntimeError("this runtime has no config file to persist MCP servers to")
        self.persistence.add(server, replace=replace)
        if replace:
            await self.remove_live(server.name)
        self.drift.forget(server.name)
        return await self.add_live(server)

    async def add_servers_from_json(self, definition: str | Mapping[str, Any], name: str | None = None,
                                    replace: bool = False) -> list[ServerStatus]:
        """What hosts (sidecar, serve) call: the JSON `mcp add` takes, as text or an object.
        ValueError (with the reason) for a definition that is not usable."""
        import json

        from atomic_agent.plugins.mcp.pasted_config import parse_pasted_servers

        text = definition if isinstance(definition, str) else json.dumps(definition)
        servers = parse_pasted_servers(text, name)
        return [await self.add_server(server, replace=replace) for server in servers]

    async def remove_server(self, name: str) -> bool:
        """`mcp remove` in a running host: persist first, then disconnect live; False when unknown."""
        if self.persistence is None:
            raise RuntimeError("this runtime has no config file to persist MCP servers to")
        persisted = self.persistence.remove(name)
        removed = await self.remove_live(name)
        if persisted or removed:
            self.drift.forget(name)
        return persisted or removed

    async def refresh(self, name: str) -> ServerStatus:
        """Fetch `name`'s catalog again (tools/list_changed, or asked for) and republish."""
        async with self._lock:
            entry = self._require(name)
            if entry.status == DOWN:
                await self._reconnect_now(entry)
                return self._status(entry)
            if entry.connection is None or entry.connection.closed.is_set():
                raise McpServerUnavailable(f"server {name!r} is not connected")
            try:
                catalog = await entry.connection.catalog()
            except Exception as exc:
                entry.last_error = describe_exception(exc)
                return self._status(entry)
            self._absorb(entry, catalog)
            self._publish()
            return self._status(entry)

    async def approve(self, name: str, tool: str | Collection[str] | None = None) -> list[str]:
        """Accept the current definitions of `name`'s tools (all, one, or the named ones) and
        republish. Every named tool must exist, or nothing is approved (KeyError)."""
        async with self._lock:
            entry = self._require(name)
            if entry.status != UP:
                raise McpServerUnavailable(f"server {name!r} is {entry.status}; it must be connected to approve "
                                           "its current tool definitions")
            tools = [t for t in entry.catalog.tools if tool_name_problem(t.name) is None]
            wanted = None if tool is None else ({tool} if isinstance(tool, str) else set(tool))
            if wanted is not None:
                missing = sorted(wanted - {t.name for t in tools})
                if missing:
                    raise KeyError(f"server {name!r} has no tool {', '.join(repr(m) for m in missing)}")
                tools = [t for t in tools if t.name in wanted]
            approved = self.drift.approve(name, tools)
            self._absorb(entry, entry.catalog)
            self._publish()
            return approved

    # -- calls ---------------------------------------------------------------------------------
    async def call_tool(self, server: str, tool: str, args: Mapping[str, Any], timeout_s: float) -> ToolCallResult:
        connection = self._connection(server)
        try:
            return await connection.call_tool(tool, args, timeout_s)
        finally:
            self._notice_loss(server, connection)

    async def read_resource(self, server: str, uri: str) -> tuple[ContentPart, ...]:
        connection = self._connection(server)
        try:
            return await connection.read_resource(uri)
        finally:
            self._notice_loss(server, connection)

    async def get_prompt(self, server: str, name: str, args: Mapping[str, str]) -> PromptResult:
        connection = self._connection(server)
        try:
            return await connection.get_prompt(name, args)
        finally:
            self._notice_loss(server, connection)

    def resources_of(self, server: str | None) -> list[tuple[str, ResourceMeta]]:
        return [(e.config.name, r) for e in self._selected(server) for r in e.catalog.resources]

    def prompts_of(self, server: str | None) -> list[tuple[str, PromptMeta]]:
        return [(e.config.name, p) for e in self._selected(server) for p in e.catalog.prompts]

    # -- reports -------------------------------------------------------------------------------
    def subscribe(self, listener: EventSink) -> Callable[[], None]:
        """Hear every event from now on (`listener(kind, fields)`); returns the unsubscribe."""
        self.listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                self.listeners.remove(listener)

        return unsubscribe

    def subscribe_host_events(self, emit: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """For hosts (serve, sidecar): server status and drift changes as event dicts
        (`mcp_server_up`, `mcp_server_down`, `mcp_tool_drift`, no session: they concern the
        whole host); returns the unsubscribe. The events carry changes only; `statuses()` is
        the state."""
        def on_event(kind: str, fields: dict[str, Any]) -> None:
            if kind in HOST_EVENTS:
                emit({"type": kind, **fields})

        return self.subscribe(on_event)

    def statuses(self) -> list[ServerStatus]:
        return sorted([self._status(e) for e in self._entries.values()] + self._rejected,
                      key=lambda s: (s.name, s.status == INVALID))

    def status(self, name: str) -> ServerStatus:
        return self._status(self._require(name))

    def names(self) -> list[str]:
        return sorted(self._entries)

    def catalog(self, name: str) -> Catalog:
        return self._require(name).catalog

    # -- internals -----------------------------------------------------------------------------
    def _new_entry(self, server: ServerConfig) -> ServerEntry:
        problem = server_problem(server)
        if problem:
            return ServerEntry(server, INVALID, last_error=problem)
        if not server.enabled:
            return ServerEntry(server, DISABLED)
        return ServerEntry(server, CONNECTING)

    def _require(self, name: str) -> ServerEntry:
        entry = self._entries.get(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise KeyError(f"no MCP server named {name!r} (configured: {known})")
        return entry

    def _selected(self, server: str | None) -> list[ServerEntry]:
        if server:
            return [self._require(server)]
        return [self._entries[n] for n in sorted(self._entries)]

    def _connection(self, server: str) -> SdkConnection:
        entry = self._entries.get(server)
        if entry is None:
            raise McpServerUnavailable(f"no MCP server named {server!r} is configured")
        connection = entry.connection
        if connection is None or connection.closed.is_set():
            why = entry.last_error or entry.status
            raise McpServerUnavailable(f"server {server!r} is {entry.status}" + (f": {why}" if why != entry.status else ""))
        return connection

    def _notice_loss(self, server: str, connection: SdkConnection) -> None:
        entry = self._entries.get(server)
        if entry is not None and entry.connection is connection and connection.closed.is_set() and entry.status == UP:
            self._mark_down(entry, connection)

    def _child_env(self, server: ServerConfig) -> dict[str, str]:
        from atomic_agent.api import child_environment

        return {**child_environment(environ=self.environ), **server.transport.env}

    def _open_errlog(self, name: str) -> TextIO | None:
        try:
            folder = self.state_dir / "mcp" / "logs"
            folder.mkdir(parents=True, exist_ok=True)
            return open(folder / f"{name}.log", "a", encoding="utf-8")  # noqa: SIM115 - closed on disconnect
        except OSError:
            return None

    async def _connect(self, entry: ServerEntry) -> None:
        server = entry.config
        connection: SdkConnection | None = None
        try:
            if server.transport.kind != STDIO:
                await check_server_url(server.transport.url, server.allow_private_network)
            if server.transport.kind == STDIO and entry.errlog is None:
                entry.errlog = self._open_errlog(server.name)
            connection = SdkConnection(server, self._child_env(server) if server.transport.kind == STDIO else {},
                                       on_sampling=self.sampling,
                                       on_tools_changed=lambda: self._schedule_refresh(server.name),
                                       errlog=entry.errlog)
            await connection.open()
            catalog = await connection.catalog()
        except asyncio.CancelledError:
            # the caller's own task was cancelled (a close cancels a reconnect): the connection
            # is in no entry yet, so nobody else would ever close it and its server would run on
            if connection is not None:
                await connection.close()
            raise
        except Exception as exc:
            entry.status, entry.last_error = DOWN, describe_exception(exc)
            if connection is not None:
                await connection.close()
            self._emit("mcp_server_down", {"server": server.name, "lastError": entry.last_error})
            return
        entry.connection, entry.status, entry.last_error = connection, UP, None
        self._absorb(entry, catalog)
        entry.watcher = asyncio.get_running_loop().create_task(self._watch(entry, connection))
        self._emit("mcp_server_up", {"server": server.name,
                                     "tools": [qualify(server.name, t.name) for t in entry.accepted],
                                     "drifted": list(entry.drifted)})

    async def _disconnect(self, entry: ServerEntry) -> None:
        tasks = [t for t in (entry.watcher, entry.refreshing, entry.reconnecting) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        # a cancelled reconnect closes the connection it was opening: done before this returns
        await asyncio.gather(*tasks, return_exceptions=True)
        if entry.connection is not None:
            await entry.connection.close()
            entry.connection = None
        if entry.errlog is not None:
            entry.errlog.close()
            entry.errlog = None

    async def _watch(self, entry: ServerEntry, connection: SdkConnection) -> None:
        await connection.closed.wait()
        if not self._closed and self._entries.get(entry.config.name) is entry and entry.connection is connection:
            self._mark_down(entry, connection)

    def _mark_down(self, entry: ServerEntry, connection: SdkConnection) -> None:
        entry.status = DOWN
        entry.last_error = connection.failure or "the connection closed"
        event: dict[str, Any] = {"server": entry.config.name, "lastError": entry.last_error}
        if self._schedule_reconnect(entry):
            event["retryInS"] = self._reconnect_delay(1)
        self._emit("mcp_server_down", event)

    def _reconnect_delay(self, attempt: int) -> float:
        return min(self.reconnect_base_s * 2 ** (attempt - 1), MAX_RECONNECT_DELAY_S)

    def _schedule_reconnect(self, entry: ServerEntry) -> bool:
        attempts = entry.config.reconnect_attempts
        if self._closed or attempts == 0 or (entry.reconnecting is not None and not entry.reconnecting.done()):
            return False
        name = entry.config.name

        async def run() -> None:
            for attempt in range(1, attempts + 1):
                await asyncio.sleep(self._reconnect_delay(attempt))
                async with self._lock:
                    if self._closed or self._entries.get(name) is not entry or entry.status != DOWN:
                        return
                    await self._reconnect_now(entry)
                    if entry.status == UP:
                        return
            entry.last_error = (f"{entry.last_error} (gave up after {attempts} reconnect attempts; "
                                "add the server again with replace to retry)")

        entry.reconnecting = asyncio.get_running_loop().create_task(run(), name=f"mcp-reconnect:{name}")
        return True

    async def _reconnect_now(self, entry: ServerEntry) -> None:
        """One connect attempt for a down server (under the lock): the old connection is
        dropped first, a success is published."""
        for task in (entry.watcher, entry.refreshing):
            if task is not None and task is not asyncio.current_task() and not task.done():
                task.cancel()
        if entry.connection is not None:
            await entry.connection.close()
            entry.connection = None
        entry.status = CONNECTING
        await self._connect(entry)
        if entry.status == UP:
            self._publish()

    def _schedule_refresh(self, name: str) -> None:
        entry = self._entries.get(name)
        if entry is None or self._closed:
            return
        if entry.refreshing is not None and not entry.refreshing.done():
            entry.refresh_again = True
            return

        async def run() -> None:
            while True:
                entry.refresh_again = False
                with contextlib.suppress(Exception):
                    await self.refresh(name)
                if not entry.refresh_again or self._entries.get(name) is not entry:
                    return

        entry.refreshing = asyncio.get_running_loop().create_task(run(), name=f"mcp-refresh:{name}")

    def _absorb(self, entry: ServerEntry, catalog: Catalog) -> None:
        """Keep the catalog; decide which tools are published, dropped or held back as drifted."""
        server = entry.config
        usable: list[ToolMeta] = []
        dropped: list[str] = []
        seen: set[str] = set()
        for tool in catalog.tools:
            problem = tool_name_problem(tool.name)
            if problem is None and tool.name in seen:
                problem = f"tool {tool.name!r} is listed twice; the first one is used"
            if problem is None and not server.admits_tool(tool.name):
                problem = f"tool {tool.name!r} is excluded by include/exclude"
            if problem is None and schema_size(tool.input_schema) > MAX_SCHEMA_BYTES:
                problem = (f"tool {tool.name!r}: its input schema is {schema_size(tool.input_schema):,} bytes, over "
                           f"the {MAX_SCHEMA_BYTES:,} a tool may use")
            if problem is None:
                schema = schema_problem(tool.input_schema)
                problem = f"tool {tool.name!r}: {schema}" if schema else None
            if problem is None:
                taken = self.registry.get(qualify(server.name, tool.name))
                if taken is not None and taken.plugin != LIVE_GROUP:
                    problem = f"tool {tool.name!r} collides with {taken.name} of plugin {taken.plugin!r}"
            if problem is not None:
                dropped.append(problem)
                continue
            seen.add(tool.name)
            usable.append(tool)
        accepted, held = self.drift.judge(server.name, usable)
        newly = sorted({t.name for t in held} - set(entry.drifted))
        entry.catalog = catalog
        entry.accepted = tuple(sorted(accepted, key=lambda t: t.name))
        entry.drifted = tuple(sorted(t.name for t in held))
        entry.dropped = tuple(dropped)
        entry.notices = tuple(t.notice for t in usable if t.notice)
        if newly:
            self._emit("mcp_tool_drift", {"server": server.name, "tools": newly,
                                          "advice": f"atomic-agent mcp approve {server.name}"})

    def _publish(self) -> None:
        if self._closed:
            return
        specs = aggregate_tool_specs(self, self.max_result_chars) if self._entries else []
        for name in sorted(self._entries):
            entry = self._entries[name]
            specs.extend(build_tool_spec(entry.config, meta, self, self.max_result_chars, self.sensitive)
                         for meta in entry.accepted)
        self.registry.set_live_tools(LIVE_GROUP, specs)

    def _status(self, entry: ServerEntry) -> ServerStatus:
        connection = entry.connection
        return ServerStatus(entry.config.name, entry.status, entry.config.transport.kind, entry.config.trust,
                            tools=tuple(qualify(entry.config.name, t.name) for t in entry.accepted),
                            drifted=entry.drifted, dropped=entry.dropped, notices=entry.notices, last_error=entry.last_error,
                            server_info=connection.server_info if connection is not None else None,
                            resources=len(entry.catalog.resources), prompts=len(entry.catalog.prompts))

    def _emit(self, kind: str, fields: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            try:
                listener(kind, fields)
            except Exception:  # a broken listener never breaks the manager
                pass
