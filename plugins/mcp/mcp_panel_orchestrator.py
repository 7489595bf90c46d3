"""What the TUI's MCP panel may do, and the only code of the panel that touches the runtime.

The widget (mcp_panel.py) asks this for rows and details and hands it the operator's
actions; everything goes through the running manager (the `mcp` service), so an add or
remove is persisted to config.json first and then applied live, exactly as the sidecar and
serve do it. Nothing here imports Textual.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from .mcp_contract import MCP_SERVICE as SERVICE
from .pasted_config import parse_pasted_servers

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

if TYPE_CHECKING:
    from .mcp_records import ServerStatus
    from .server_config import ServerConfig



@attrs.frozen
class ServerRow:
    name: str
    status: str
    transport: str
    trust: str
    tools: int
    drifted: int


class McpPanelOrchestrator:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime

    @property
    def manager(self) -> Any:
        return self.runtime.service(SERVICE)

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` whenever a server comes up, goes down or shows drift (a server
        restarting on its own, a reconnect); returns the unsubscribe."""
        return self.manager.subscribe(lambda _kind, _fields: listener())

    def rows(self) -> list[ServerRow]:
        return [ServerRow(s.name, s.status, s.transport, s.trust, len(s.tools), len(s.drifted))
                for s in self.manager.statuses()]

    def detail(self, name: str) -> str:
        """A server's state in plain lines; the drifted tools are named with what approving means."""
        status = self._status(name)
        if status is None:
            return f"{name}: no longer configured"
        lines = [f"{status.name} — {status.status} ({status.transport}, trust {status.trust})"]
        if status.server_info:
            lines.append(f"server: {status.server_info}")
        if status.last_error:
            lines.append(f"last error: {status.last_error}")
        lines.append(f"tools ({len(status.tools)}): {', '.join(status.tools) or '-'}")
        if status.resources or status.prompts:
            lines.append(f"resources: {status.resources}, prompts: {status.prompts}")
        if status.drifted:
            lines.append(f"held back, new or changed since approval ({len(status.drifted)}): "
                         f"{', '.join(status.drifted)} — read them below; a approves these definitions")
            lines.extend(self._held_definitions(name, status.drifted))
        for reason in status.dropped:
            lines.append(f"dropped: {reason}")
        return "\n".join(lines)

    def _held_definitions(self, name: str, drifted: tuple[str, ...]) -> list[str]:
        """What approving would accept, in full: a changed description is where an injected
        instruction hides, so the operator reads the definition itself, not a summary."""
        import json

        try:
            tools = [t for t in self.manager.catalog(name).tools if t.name in drifted]
        except KeyError:
            return []
        lines = []
        for tool in tools:
            lines.append(f"  {tool.name}: {tool.description}")
            lines.append(f"    readOnlyHint: {json.dumps(tool.read_only_hint)}; "
                         f"args: {json.dumps(dict(tool.input_schema), sort_keys=True)}")
        return lines

    def drifted(self, name: str) -> tuple[str, ...]:
        status = self._status(name)
        return () if status is None else status.drifted

    def parse(self, text: str) -> list[ServerConfig]:
        """The servers in pasted JSON (any shape `mcp add` takes); PastedConfigError says what is wrong."""
        return parse_pasted_servers(text)

    async def add(self, servers: list[ServerConfig]) -> list[ServerStatus]:
        """Persist, then connect live; a server that fails to connect stays configured and shows down."""
        return [await self.manager.add_server(server) for server in servers]

    async def remove(self, name: str) -> bool:
        return bool(await self.manager.remove_server(name))

    async def approve(self, name: str) -> list[str]:
        return list(await self.manager.approve(name))

    async def refresh(self, name: str) -> ServerStatus:
        return await self.manager.refresh(name)

    def _status(self, name: str) -> ServerStatus | None:
        return next((s for s in self.manager.statuses() if s.name == name), None)
