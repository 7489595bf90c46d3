"""The plugin's own neutral records: what the rest of the plugin knows of MCP.

Only `sdk_connection` touches the SDK's types; it converts them into these on the way in
and back on the way out, so replacing the SDK touches that one module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

UP, DOWN, CONNECTING, DISABLED, INVALID = "up", "down", "connecting", "disabled", "invalid"


@attrs.frozen
class ToolMeta:
    """One tool as the server advertised it at discovery."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    read_only_hint: bool | None = None  # the raw annotation: only exactly True exempts from the gate
    title: str | None = None
    notice: str | None = None  # what was odd about the advertised tool and ignored (a non-boolean hint)


@attrs.frozen
class ResourceMeta:
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None


@attrs.frozen
class PromptArgumentMeta:
    name: str
    description: str = ""
    required: bool = False


@attrs.frozen
class PromptMeta:
    name: str
    description: str = ""
    arguments: tuple[PromptArgumentMeta, ...] = ()


@attrs.frozen
class Catalog:
    """What a server offers, as of its last refresh."""

    tools: tuple[ToolMeta, ...] = ()
    resources: tuple[ResourceMeta, ...] = ()
    prompts: tuple[PromptMeta, ...] = ()


@attrs.frozen
class ContentPart:
    """One content block of a result, projected to text (`kind` text|image|audio|resource|link)."""

    kind: str
    text: str
    mime_type: str | None = None
    uri: str | None = None


@attrs.frozen
class ToolCallResult:
    parts: tuple[ContentPart, ...]
    is_error: bool = False
    structured: Any = None


@attrs.frozen
class PromptResult:
    description: str
    messages: tuple[tuple[str, ContentPart], ...]  # (role, content)


@attrs.frozen
class SamplingMessage:
    role: str  # "user" | "assistant"
    text: str


@attrs.frozen
class SamplingRequest:
    """A server's `sampling/createMessage`, reduced to what a text provider can answer."""

    server: str
    messages: tuple[SamplingMessage, ...]
    max_tokens: int
    system_prompt: str | None = None
    temperature: float | None = None
    stop: tuple[str, ...] = ()


@attrs.frozen
class SamplingReply:
    text: str
    model: str
    stop_reason: str = "endTurn"  # "endTurn" | "maxTokens" | "stopSequence"


@attrs.frozen
class ServerStatus:
    """A server as `mcp list` and the hosts report it."""

    name: str
    status: str  # up | down | connecting | disabled | invalid
    transport: str
    trust: str
    tools: tuple[str, ...] = ()  # qualified names registered now
    drifted: tuple[str, ...] = ()  # raw tool names held back until `mcp approve`
    dropped: tuple[str, ...] = ()  # raw tool names refused (invalid name, schema, collision, filter) with why
    notices: tuple[str, ...] = ()  # odd advertisements that were ignored (a hint that is not a boolean)
    last_error: str | None = None
    server_info: str | None = None
    resources: int = 0
    prompts: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "transport": self.transport, "trust": self.trust,
                "tools": list(self.tools), "toolCount": len(self.tools), "drifted": list(self.drifted),
                "dropped": list(self.dropped), "notices": list(self.notices), "lastError": self.last_error, "serverInfo": self.server_info,
                "resources": self.resources, "prompts": self.prompts}
