"""The `mcp` config block: `servers[]`, each a transport, a trust level and limits.

On disk (camelCase)::

    "mcp": {"servers": [
      {"name": "files", "transport": {"kind": "stdio", "command": "npx",
                                      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
       "trust": "pure_read", "include": ["read_*"], "exclude": []},
      {"name": "remote", "transport": {"kind": "streamable_http", "url": "http://127.0.0.1:8931/mcp"}}
    ]}

Structural problems (a wrong type, an unknown key) are config errors. Problems of one
server that should not stop the others (a bad or duplicate name, a missing command, a URL
the SSRF rules refuse) are found by `server_problem` and make that server `invalid` with
the reason, while the rest connect.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    pass

MCP_BLOCK = "mcp"
STDIO, STREAMABLE_HTTP, SSE = "stdio", "streamable_http", "sse"
TRANSPORT_KINDS = (STDIO, STREAMABLE_HTTP, SSE)
APPROVAL_GATED, PURE_READ = "approval_gated", "pure_read"
TRUST_LEVELS = (APPROVAL_GATED, PURE_READ)
SERVER_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_SERVER_NAME = 32
#: names the aggregate tools use as their middle segment (mcp.resource.list, mcp.prompt.get)
RESERVED_SERVER_NAMES = ("resource", "prompt")


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise TypeError(f"expected an object of strings, got {type(value).__name__}")
    return {str(k): str(v) for k, v in value.items()}


@attrs.frozen
class TransportConfig:
    """How to reach the server: `stdio` (command, args, cwd, env) or `streamable_http` /
    `sse` (url, headers)."""

    kind: str = value_field(STDIO, choices=TRANSPORT_KINDS)
    command: str = ""
    args: tuple[str, ...] = value_field(())
    cwd: str | None = None
    env: dict[str, str] = attrs.field(factory=dict, converter=_str_map)
    url: str = ""
    headers: dict[str, str] = attrs.field(factory=dict, converter=_str_map)


@attrs.frozen
class ServerConfig:
    """One MCP server. `trust` decides batching and approval of its tools; `include` /
    `exclude` are shell-style globs over its raw tool names; `allowPrivateNetwork` lets an
    HTTP server live on a private-network address (loopback is always allowed; cloud
    metadata addresses never). A server whose connection is lost (it crashed, its HTTP
    endpoint went away) is reconnected `reconnectAttempts` times with growing delays."""

    name: str
    transport: TransportConfig = attrs.field(factory=TransportConfig)
    description: str = ""
    enabled: bool = True
    trust: str = value_field(APPROVAL_GATED, choices=TRUST_LEVELS)
    include: tuple[str, ...] = value_field(())
    exclude: tuple[str, ...] = value_field(())
    allow_private_network: bool = False
    connect_timeout_s: int = int_field(15, 1, 300)
    call_timeout_s: int = int_field(60, 1, 3600)
    reconnect_attempts: int = int_field(8, 0, 100)  # after a lost connection; 0 leaves it down

    def admits_tool(self, raw_name: str) -> bool:
        if self.include and not any(fnmatch.fnmatchcase(raw_name, p) for p in self.include):
            return False
        return not any(fnmatch.fnmatchcase(raw_name, p) for p in self.exclude)


@attrs.frozen
class SamplingConfig:
    """Caps for `sampling/createMessage` requests servers send to the agent's model."""

    enabled: bool = True
    requests_per_minute: int = int_field(10, 0, 600)
    max_tokens: int = int_field(512, 1, 8192)
    timeout_s: int = int_field(60, 1, 600)


def _server_tuple(servers: Iterable[ServerConfig]) -> tuple[ServerConfig, ...]:
    return tuple(servers)


@attrs.frozen
class McpConfig:
    servers: tuple[ServerConfig, ...] = attrs.field(factory=tuple, converter=_server_tuple)
    sampling: SamplingConfig = attrs.field(factory=SamplingConfig)
    max_result_chars: int = int_field(64_000, 1_000, 4_000_000)


def server_name_problem(name: str) -> str | None:
    """Why `name` cannot name a server (None when it can)."""
    if not isinstance(name, str) or not name:
        return "a server needs a name"
    if len(name) > MAX_SERVER_NAME:
        return f"server name {name!r} is longer than {MAX_SERVER_NAME} characters"
    if not SERVER_NAME_RE.match(name):
        return f"server name {name!r} must be kebab-case: lowercase letters and digits joined by single dashes"
    if name in RESERVED_SERVER_NAMES:
        return f"server name {name!r} is reserved for the aggregate mcp.{name}.* tools"
    return None


def server_problem(server: ServerConfig) -> str | None:
    """What makes this server unusable on its own (None when it looks usable)."""
    problem = server_name_problem(server.name)
    if problem:
        return problem
    transport = server.transport
    if transport.kind == STDIO:
        if not transport.command.strip():
            return "a stdio server needs transport.command"
        if transport.url:
            return "a stdio server takes command/args, not a url"
    else:
        if not transport.url:
            return f"a {transport.kind} server needs transport.url"
        if not transport.url.startswith(("http://", "https://")):
            return f"transport.url must start with http:// or https://, got {transport.url!r}"
        if transport.command:
            return f"a {transport.kind} server takes a url, not a command"
    return None


def duplicate_names(servers: tuple[ServerConfig, ...]) -> set[int]:
    """Indexes of servers whose name an earlier entry already uses (the first one wins)."""
    seen: set[str] = set()
    later: set[int] = set()
    for index, server in enumerate(servers):
        if server.name in seen:
            later.add(index)
        seen.add(server.name)
    return later


class Configured(Protocol):
    """What holds the loaded config: a runtime (RuntimeView) or a command's boot context."""

    @property
    def config(self) -> Any: ...


def mcp_config(holder: Configured) -> McpConfig:
    try:
        block = holder.config.block(MCP_BLOCK)
    except (KeyError, AttributeError):
        return McpConfig()
    return block if isinstance(block, McpConfig) else McpConfig()
