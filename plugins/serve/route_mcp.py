"""The running host's MCP servers over HTTP, changed live (the MCP plugin's service "mcp").

- `GET /api/mcp/servers`: every server with status, tools, tool count, drifted tools, lastError.
- `POST /api/mcp/servers`: the body is the JSON `atomic-agent mcp add` takes (`{"mcpServers":
  {...}}`, one server object, this project's shape); `?name=` names a lone server that has
  none, `?replace=true` replaces a configured one. config.json is written first, then the
  servers connect; 201 with their statuses (a server that could not connect is `down` with
  its `lastError`, and stays configured).
- `DELETE /api/mcp/servers/{name}`: written to config.json first, then disconnected.
- `POST /api/mcp/servers/{name}/approve`: accept the current definitions of drifted tools —
  all of them, or `{"tools": [...]}` (raw tool names; all must exist or nothing is approved).

Listing is open to every caller the guard lets in. Adding a server (it runs a command or
reaches a URL, and its tools join the model's prompt), removing one (config.json is the
operator's) and approving drift (trusting changed tool text) are operator actions: they need
the operator token (`X-Atomic-Operator`) or, when one is configured, the API key.
The next step of every session is built from the live tool set.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.mcp.mcp_contract import MCP_SERVICE, McpServers
from atomic_agent.plugins.serve.client_identity import OPERATOR_HEADER, caller_of
from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.request_body import json_body

_TRUE, _FALSE = ("1", "true", "yes"), ("0", "false", "no")


def _manager(ctx: Any) -> McpServers:
    try:
        manager: McpServers = ctx.runtime.service(MCP_SERVICE)
        return manager
    except KeyError:
        raise ApiError(501, "the mcp plugin is not loaded in this server (check `atomic-agent plugins` and "
                       "plugins.disabled)", code="mcp_unavailable") from None
    except RuntimeError as exc:  # its provider failed to build
        raise ApiError(501, f"the MCP client is not available in this server: {exc}", code="mcp_unavailable") \
            from None


def require_operator(request: Any, ctx: Any, action: str) -> None:
    """403 unless the caller presented the operator token (or the API key, which implies it)."""
    if not caller_of(request, ctx.settings).operator:
        how = "the API key" if ctx.settings.api_key else f"the {OPERATOR_HEADER} header with the token in " \
                                                         "<state>/serve/operator-token"
        raise ApiError(403, f"{action} is an operator action: send {how}", "permission_error",
                       "operator_required")


def _flag(request: Any, name: str) -> bool:
    raw = request.query_params.get(name)
    if raw is None:
        return False
    if raw.strip().lower() in _TRUE:
        return True
    if raw.strip().lower() in _FALSE:
        return False
    raise ApiError(400, f"{name} must be true or false, got {raw!r}", code="invalid_value")


def _message(exc: BaseException) -> str:
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


async def list_servers(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    return JSONResponse({"object": "list", "data": [s.to_json() for s in _manager(ctx).statuses()]})


async def add_servers(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    require_operator(request, ctx, "adding an MCP server")
    manager = _manager(ctx)
    definition = await json_body(request, ctx.settings.max_body_bytes)
    name = request.query_params.get("name") or None
    replace = _flag(request, "replace")
    try:
        statuses = await manager.add_servers_from_json(definition, name, replace)
    except ValueError as exc:
        if getattr(exc, "code", None) == "mcp_server_exists":
            raise ApiError(409, f"{exc}; DELETE /api/mcp/servers/{{name}} first, or add with ?replace=true",
                           code="mcp_server_exists") from None
        raise ApiError(400, str(exc), code="mcp_invalid_server") from None
    except RuntimeError as exc:  # no config file to persist to: nothing was connected
        raise ApiError(409, str(exc), code="mcp_not_persistable") from None
    return JSONResponse({"object": "list", "data": [s.to_json() for s in statuses]}, status_code=201)


async def remove_server(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    require_operator(request, ctx, "removing an MCP server")
    name = request.path_params["name"]
    try:
        removed = await _manager(ctx).remove_server(name)
    except RuntimeError as exc:
        raise ApiError(409, str(exc), code="mcp_not_persistable") from None
    if not removed:
        raise ApiError(404, f"no MCP server named {name!r} is configured; GET /api/mcp/servers lists them",
                       code="mcp_server_not_found")
    return JSONResponse({"name": name, "removed": True})


def _tool_list(body: dict[str, Any]) -> list[str] | None:
    unknown = sorted(set(body) - {"tools"})
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; send {{\"tools\": [\"TOOL\", ...]}} or no body "
                       "(approve every tool of the server)", code="invalid_value")
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list) or not tools or not all(isinstance(t, str) and t for t in tools):
        raise ApiError(400, "tools must be a non-empty list of the server's tool names (as the server names them, "
                       "without the mcp.<server>. prefix); send no body to approve every tool", code="invalid_value")
    return tools


async def approve_tools(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    require_operator(request, ctx, "approving changed MCP tool definitions")
    name = request.path_params["name"]
    tools = _tool_list(await json_body(request, ctx.settings.max_body_bytes, required=False))
    manager = _manager(ctx)
    if name not in manager.names():
        raise ApiError(404, f"no MCP server named {name!r} is connected in this server; GET /api/mcp/servers lists "
                       "them", code="mcp_server_not_found")
    try:
        approved = await manager.approve(name, tools)
    except KeyError as exc:
        raise ApiError(400, _message(exc), code="mcp_tool_not_found") from None
    except Exception as exc:
        if getattr(exc, "code", None) != "mcp_server_unavailable":
            raise
        raise ApiError(409, str(exc), code="mcp_server_unavailable") from None
    return JSONResponse({"server": name, "approved": approved, "status": manager.status(name).to_json()})
