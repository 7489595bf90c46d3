"""MCP server status and drift changes, published to GET /api/events while `serve` runs.

The MCP plugin's manager (service "mcp") announces `mcp_server_up`, `mcp_server_down` and
`mcp_tool_drift`; each becomes an event of that type (no session: it concerns the whole
server). Only operator callers see them (see `client_identity.visible`): they describe what
the operator configured and what needs the operator's approval. Without the MCP plugin
there is nothing to relay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MCP_EVENTS = frozenset({"mcp_server_up", "mcp_server_down", "mcp_tool_drift"})


def relay_mcp_events(runtime: Any, publish: Callable[[dict[str, Any]], None]) -> Callable[[], None] | None:
    """Subscribe `publish` to the runtime's MCP manager; returns the unsubscribe (None: no MCP)."""
    try:
        manager = runtime.service("mcp")
    except (KeyError, RuntimeError):
        return None

    def on_event(kind: str, fields: dict[str, Any]) -> None:
        if kind in MCP_EVENTS:
            publish({"type": kind, **fields})

    return manager.subscribe(on_event)
