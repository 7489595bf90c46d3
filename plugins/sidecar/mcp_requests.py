"""`mcp_list`, `mcp_add`, `mcp_remove`: the MCP servers of the running host, changed live.

Add and remove go through the MCP plugin's service ("mcp"), which writes config.json first
and then connects or disconnects; the next step's prompt and grammar are rebuilt from the
live tool set. Without the MCP plugin these answer `mcp_unavailable`.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.mcp.mcp_contract import MCP_SERVICE, McpServers
from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError


def _mcp(server: Any) -> McpServers:
    try:
        manager: McpServers = server.runtime.service(MCP_SERVICE)
        return manager
    except KeyError:
        raise ProtocolError("mcp_unavailable", "the mcp plugin is not loaded in this sidecar "
                            "(check `atomic-agent plugins` and plugins.disabled)") from None


async def mcp_list(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return {"servers": [s.to_json() for s in _mcp(server).statuses()]}


async def mcp_add(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    manager = _mcp(server)
    try:
        statuses = await manager.add_servers_from_json(request["definition"], request.get("name"),
                                                       bool(request.get("replace", False)))
    except ValueError as exc:
        raise ProtocolError("mcp_invalid_server", str(exc)) from None
    return {"servers": [s.to_json() for s in statuses]}


async def mcp_remove(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    name = request["name"]
    if not await _mcp(server).remove_server(name):
        raise ProtocolError("mcp_server_not_found", f"no MCP server named {name!r} is configured")
    return {"name": name, "removed": True}


MCP_HANDLERS = {"mcp_list": mcp_list, "mcp_add": mcp_add, "mcp_remove": mcp_remove}
