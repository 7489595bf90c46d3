"""MCP server status and drift changes, sent to the host as event lines while the sidecar runs.

The MCP plugin's manager (service "mcp") announces `mcp_server_up`, `mcp_server_down` and
`mcp_tool_drift`; each goes out as an event of that type with no session or turn (it
concerns the whole sidecar). The host reads the current state with `mcp_list`; the events
carry only changes. Without the MCP plugin there is nothing to relay.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

MCP_EVENTS = frozenset({"mcp_server_up", "mcp_server_down", "mcp_tool_drift"})


def relay_mcp_events(runtime: Any, emit: Callable[[dict[str, Any]], None]) -> Callable[[], None] | None:
    """Subscribe `emit` to the runtime's MCP manager; returns the unsubscribe (None: no MCP)."""
    try:
        manager = runtime.service("mcp")
    except (KeyError, RuntimeError):
        return None

    def on_event(kind: str, fields: dict[str, Any]) -> None:
        if kind in MCP_EVENTS:
            emit({"type": kind, **fields})

    return manager.subscribe(on_event)
