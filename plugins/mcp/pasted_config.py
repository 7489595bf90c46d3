"""Turn the JSON people paste from other MCP clients into `mcp.servers[]` entries.

Accepted shapes (what `atomic-agent mcp add` takes):

- `{"mcpServers": {"NAME": {...}, ...}}` — Claude Desktop, Cursor, Cline, Windsurf;
  `{"servers": {...}}` — VS Code; `{"NAME": {...}}` when every value looks like a server;
- one server object with `name` (or a name given on the command line);
- per server: `command`/`args`/`env`/`cwd` (stdio), `url` or `serverUrl` (streamable
  HTTP, or SSE with `type`/`transport` `"sse"`), `headers`, `disabled`; and this
  project's own shape (`transport: {"kind": ...}`, `trust`, `include`, `exclude`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from atomic_agent.plugins.mcp.server_config import (
    SSE,
    STDIO,
    STREAMABLE_HTTP,
    ServerConfig,
    TransportConfig,
    server_problem,
)

_TYPE_ALIASES = {"stdio": STDIO, "sse": SSE, "http": STREAMABLE_HTTP, "streamable_http": STREAMABLE_HTTP,
                 "streamable-http": STREAMABLE_HTTP, "streamablehttp": STREAMABLE_HTTP}
_OWN_KEYS = {"description": "description", "enabled": "enabled", "trust": "trust", "include": "include",
             "exclude": "exclude", "allowPrivateNetwork": "allow_private_network",
             "connectTimeoutS": "connect_timeout_s", "callTimeoutS": "call_timeout_s",
             "reconnectAttempts": "reconnect_attempts"}
_SERVER_HINTS = ("command", "url", "serverUrl", "transport", "type")


class PastedConfigError(ValueError):
    """The pasted text is not a server definition we understand; the message says why."""


def parse_pasted_servers(text: str, name: str | None = None) -> list[ServerConfig]:
    """Every server in `text`, validated; `name` names a lone server that has none."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PastedConfigError(f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(value, Mapping):
        raise PastedConfigError(f"expected a JSON object, got {type(value).__name__}")
    entries = _named_entries(value, name)
    servers = [_server(entry_name, raw) for entry_name, raw in entries]
    names = [s.name for s in servers]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        raise PastedConfigError(f"server name {dup!r} appears twice in the pasted JSON")
    return servers


def _named_entries(value: Mapping[str, Any], name: str | None) -> list[tuple[str, Mapping[str, Any]]]:
    for key in ("mcpServers", "servers", "mcp_servers"):
        if key in value and isinstance(value[key], Mapping):
            return _mapping_entries(value[key])
    if key_present(value, _SERVER_HINTS):
        server_name = value.get("name", name)
        if not isinstance(server_name, str) or not server_name:
            raise PastedConfigError("this server has no name: add \"name\" to the JSON or pass --name")
        return [(server_name, value)]
    if value and all(isinstance(v, Mapping) and key_present(v, _SERVER_HINTS) for v in value.values()):
        return _mapping_entries(value)
    raise PastedConfigError("no MCP server found: expected {\"mcpServers\": {...}}, a server object with "
                            "\"command\" or \"url\", or a map of name -> server")


def key_present(value: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    return any(k in value for k in keys)


def _mapping_entries(servers: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    entries = []
    for entry_name, raw in servers.items():
        if not isinstance(raw, Mapping):
            raise PastedConfigError(f"server {entry_name!r} must be an object, got {type(raw).__name__}")
        entries.append((str(entry_name), raw))
    if not entries:
        raise PastedConfigError("the server map is empty")
    return entries


def _server(name: str, raw: Mapping[str, Any]) -> ServerConfig:
    try:
        transport = _transport(name, raw)
        own = {field: raw[key] for key, field in _OWN_KEYS.items() if key in raw}
        if raw.get("disabled") is True:
            own["enabled"] = False
        for list_field in ("include", "exclude"):
            if list_field in own and not _is_str_list(own[list_field]):
                raise PastedConfigError(f"server {name!r}: {list_field} must be a list of strings")
        server = ServerConfig(name=name, transport=transport, **own)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, PastedConfigError):
            raise
        raise PastedConfigError(f"server {name!r}: {exc}") from None
    problem = server_problem(server)
    if problem:
        raise PastedConfigError(f"server {name!r}: {problem}")
    return server


def _transport(name: str, raw: Mapping[str, Any]) -> TransportConfig:
    nested = raw.get("transport")
    if isinstance(nested, Mapping):  # this project's own shape
        nested = dict(nested)
        kind = _kind(name, nested.pop("kind", STDIO))
        unknown = set(nested) - {"command", "args", "cwd", "env", "url", "headers"}
        if unknown:
            raise PastedConfigError(f"server {name!r}: unknown transport keys {', '.join(sorted(unknown))}")
        return _build(name, kind, nested)
    declared = raw.get("type", nested if isinstance(nested, str) else None)
    url = raw.get("url", raw.get("serverUrl"))
    if declared is not None:
        kind = _kind(name, declared)
    elif url is not None:
        kind = STREAMABLE_HTTP
    else:
        kind = STDIO
    fields = {k: raw[k] for k in ("command", "args", "cwd", "env", "headers") if k in raw}
    if url is not None:
        fields["url"] = url
    return _build(name, kind, fields)


def _kind(name: str, declared: object) -> str:
    kind = _TYPE_ALIASES.get(str(declared).lower()) if isinstance(declared, str) else None
    if kind is None:
        raise PastedConfigError(f"server {name!r}: unknown transport type {declared!r}; use stdio, http or sse")
    return kind


def _build(name: str, kind: str, fields: Mapping[str, Any]) -> TransportConfig:
    if "args" in fields and not _is_str_list(fields["args"]):
        raise PastedConfigError(f"server {name!r}: args must be a list of strings")
    for key in ("command", "url", "cwd"):
        if key in fields and fields[key] is not None and not isinstance(fields[key], str):
            raise PastedConfigError(f"server {name!r}: {key} must be a string")
    return TransportConfig(kind=kind, **dict(fields))


def _is_str_list(value: object) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


def server_to_raw(server: ServerConfig) -> dict[str, Any]:
    """The camelCase dict `config.json` stores for `server` (defaults left out)."""
    transport: dict[str, Any] = {"kind": server.transport.kind}
    t = server.transport
    if t.kind == STDIO:
        transport["command"] = t.command
        if t.args:
            transport["args"] = list(t.args)
        if t.cwd:
            transport["cwd"] = t.cwd
        if t.env:
            transport["env"] = dict(t.env)
    else:
        transport["url"] = t.url
        if t.headers:
            transport["headers"] = dict(t.headers)
    raw: dict[str, Any] = {"name": server.name, "transport": transport}
    defaults = ServerConfig(name=server.name)
    for key, field in _OWN_KEYS.items():
        value = getattr(server, field)
        if value != getattr(defaults, field):
            raw[key] = list(value) if isinstance(value, tuple) else value
    return raw
