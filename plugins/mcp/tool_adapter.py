"""An MCP server's tool as a ToolSpec: `mcp.<server>.<tool>`, tier frequent, the server's
input schema verbatim, gated by the server's trust.

Trust `approval_gated` (the default): the tool runs alone in its batch and asks the
approval gate under category `other` before `tools/call`; a tool whose discovery-time
`readOnlyHint` is exactly `true` skips the question (it still runs alone: the server
cannot buy itself parallel fan-out). A denied call never reaches the server. Trust
`pure_read`: the tool fans out with other reads and never asks.

Egress: every MCP call sends its arguments to another program that may send them anywhere,
so once the session has read a credential store (the os plugin's sensitive-read mark, the
same one `os.http.request`, `os.web.fetch` and `os.web.search` obey) each call asks under
`sensitive_egress` first, whatever its `readOnlyHint` or the server's trust: a hint is the
server's own claim, and a key read must not leave through a tool that says it only reads.
Every failure (refused,
timed out, dropped connection, an `isError` result) is an error result, never an
exception, so siblings in a batch keep running.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec
from atomic_agent.plugins.mcp.mcp_errors import describe_exception
from atomic_agent.plugins.mcp.mcp_records import ContentPart, ToolCallResult, ToolMeta
from atomic_agent.plugins.mcp.server_config import PURE_READ, ServerConfig
from atomic_agent.plugins.mcp.tool_names import qualify

APPROVAL_CATEGORY = "other"
SENSITIVE_EGRESS = "sensitive_egress"  # registered by the os plugin's http tool (egress_policy)
PLUGIN_NAME = "mcp"  # live tools are not stamped by the core: name the owner ourselves
MAX_SUMMARY_CHARS = 300
APPROVAL_ARGS_PREVIEW = 300


class ToolCaller(Protocol):
    async def call_tool(self, server: str, tool: str, args: Mapping[str, Any], timeout_s: float) -> ToolCallResult: ...


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_gate_exempt(meta: ToolMeta) -> bool:
    """Exactly `readOnlyHint: true` at discovery; missing or odd annotations stay gated."""
    return meta.read_only_hint is True


class CredentialReads(Protocol):
    """The `sensitive_reads` service (the os plugin marks what each session's tools read)."""

    def reads_of(self, session_id: str) -> list[str]: ...


MAX_SCHEMA_BYTES = 64 * 1024  # a tool's input schema goes into every prompt; real ones are a few KiB


def schema_size(schema: Mapping[str, Any]) -> int:
    """The schema's size as JSON (what it would cost in the prompt); unserialisable counts as huge."""
    try:
        return len(json.dumps(schema, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    except (TypeError, ValueError):
        return MAX_SCHEMA_BYTES + 1


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """Why a server's input schema cannot be used for validation and the prompt."""
    import jsonschema

    if not isinstance(schema, Mapping):
        return "its input schema is not an object"
    if schema.get("type", "object") != "object":
        return f"its input schema has type {schema.get('type')!r}, not object"
    try:
        json.dumps(schema)
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(dict(schema))
    except (TypeError, ValueError, jsonschema.SchemaError) as exc:
        return f"its input schema is invalid: {str(exc).splitlines()[0][:160]}"
    return None


def render_parts(parts: tuple[ContentPart, ...]) -> str:
    return "\n".join(p.text for p in parts if p.text) or "(no content)"


def capped(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit] + f"\n… [{len(text) - limit} more characters cut]", True


def build_tool_spec(server: ServerConfig, meta: ToolMeta, caller: ToolCaller, max_result_chars: int,
                    sensitive: CredentialReads | None = None) -> ToolSpec:
    """`sensitive`: which credential stores a session read (None without the os plugin: none)."""
    name = qualify(server.name, meta.name)
    pure = server.trust == PURE_READ
    gated = not pure and not is_gate_exempt(meta)

    async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        preview = one_line(json.dumps(dict(args), ensure_ascii=False, default=str), APPROVAL_ARGS_PREVIEW)
        reads = sensitive.reads_of(ctx.session_id) if sensitive is not None else []
        if reads:
            summary = (f"MCP {server.name} › {meta.name} {preview} — this session read {', '.join(reads)} "
                       "(credentials); the call could carry them out")
            if not await ctx.ask_approval(SENSITIVE_EGRESS, summary):
                return ToolResult.error(f"{name} was not approved: a call to an MCP server after reading "
                                        f"{', '.join(reads)} needs the person's approval; the server was not "
                                        "contacted", approvalDenied=True, mcpServer=server.name, mcpTool=meta.name)
        elif gated and not await ctx.ask_approval(APPROVAL_CATEGORY, f"MCP {server.name} › {meta.name} {preview}"):
            return ToolResult.error(f"{name} was not approved; the server was not contacted",
                                    approvalDenied=True, mcpServer=server.name, mcpTool=meta.name)
        try:
            result = await caller.call_tool(server.name, meta.name, args, float(server.call_timeout_s))
        except Exception as exc:  # a failed MCP call is an error result, never an exception
            return ToolResult.error(f"{name} failed: {describe_exception(exc)}", mcpServer=server.name,
                                    mcpTool=meta.name)
        return project_result(name, server.name, meta.name, result, max_result_chars)

    return ToolSpec(name=name, summary=f"[mcp:{server.name}] {one_line(meta.description or meta.title or meta.name, MAX_SUMMARY_CHARS)}",
                    args_schema=dict(meta.input_schema) or {"type": "object"},
                    resource_class=ResourceClass.PURE_READ if pure else ResourceClass.APPROVAL_GATED, run=run,
                    tier=Tier.FREQUENT, approval_category=APPROVAL_CATEGORY if gated else None, durable=pure,
                    plugin=PLUGIN_NAME)


def project_result(name: str, server: str, tool: str, result: ToolCallResult, max_chars: int) -> ToolResult:
    text, cut = capped(render_parts(result.parts), max_chars)
    details: dict[str, Any] = {"mcpServer": server, "mcpTool": tool, "text": text,
                               "parts": [{"kind": p.kind, "mimeType": p.mime_type, "uri": p.uri} for p in result.parts]}
    if cut:
        details["truncated"] = True
    if result.structured is not None:
        encoded = json.dumps(result.structured, ensure_ascii=False, default=str)
        details["structured"] = result.structured if len(encoded) <= max_chars else {"omitted": f"{len(encoded)} chars"}
    if result.is_error:
        return ToolResult.error(f"{name} reported an error: {text}", **details)
    return ToolResult.ok(text, **details)
