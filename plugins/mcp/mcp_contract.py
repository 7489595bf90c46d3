"""The `mcp` service (the MCP server manager) as other plugins see it: its name and what the
serve routes and sidecar requests call on it (see plugins/metrics/metrics_contract.py for
what a contract module may hold).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Protocol

MCP_SERVICE = "mcp"


class McpServerStatus(Protocol):
    """One configured server's state (connection, tools, drift) as the routes show it."""

    def to_json(self) -> dict[str, Any]: ...


class McpServers(Protocol):
    """The live MCP servers: every change is written to config.json first, then applied."""

    def statuses(self) -> list[Any]:
        """Each configured server's `McpServerStatus`, in config order."""
        ...

    def status(self, name: str) -> Any:
        """One server's `McpServerStatus`; KeyError when no server has that name."""
        ...

    def names(self) -> list[str]: ...

    async def add_servers_from_json(self, definition: str | Mapping[str, Any], name: str | None = None,
                                    replace: bool = False) -> list[Any]:
        """Add the servers of a pasted definition (the shapes other clients use); ValueError
        says what was wrong with it."""
        ...

    async def remove_server(self, name: str) -> bool:
        """False when no server has that name."""
        ...

    async def approve(self, name: str, tool: str | Collection[str] | None = None) -> list[str]:
        """Approve drifted tools (all of the server's when `tool` is None); the approved names."""
        ...
