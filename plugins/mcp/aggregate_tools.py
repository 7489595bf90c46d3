"""The four aggregate read-only tools: `mcp.resource.list|read` and `mcp.prompt.list|get`.

One registration per runtime, dispatching by a `server` argument (one tool per server
would grow the prompt with every server). They are registered once the first server is
configured, so a runtime without MCP servers keeps its prompt unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec
from atomic_agent.plugins.mcp.mcp_errors import describe_exception
from atomic_agent.plugins.mcp.mcp_records import ContentPart, PromptMeta, PromptResult, ResourceMeta
from atomic_agent.plugins.mcp.tool_adapter import PLUGIN_NAME, capped, one_line, render_parts

LIST_LIMIT = 100
SERVER_ARG = {"type": "string", "description": "MCP server name (see `mcp list`)"}


class CatalogSource(Protocol):
    def resources_of(self, server: str | None) -> list[tuple[str, ResourceMeta]]: ...
    def prompts_of(self, server: str | None) -> list[tuple[str, PromptMeta]]: ...
    async def read_resource(self, server: str, uri: str) -> tuple[ContentPart, ...]: ...
    async def get_prompt(self, server: str, name: str, args: Mapping[str, str]) -> PromptResult: ...


def aggregate_tool_specs(source: CatalogSource, max_result_chars: int) -> list[ToolSpec]:
    async def list_resources(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        try:
            rows = source.resources_of(args.get("server"))
        except KeyError as exc:
            return ToolResult.error(str(exc.args[0]))
        lines = [f"{server} {r.uri} — {one_line(r.name + (': ' + r.description if r.description else ''), 120)}"
                 for server, r in rows[:LIST_LIMIT]]
        more = f"\n… {len(rows) - LIST_LIMIT} more" if len(rows) > LIST_LIMIT else ""
        return ToolResult.ok("\n".join(lines) + more if lines else "no resources", count=len(rows))

    async def read_resource(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        try:
            parts = await source.read_resource(args["server"], args["uri"])
        except Exception as exc:  # an MCP failure is an error result
            return ToolResult.error(f"mcp.resource.read failed: {describe_exception(exc)}")
        text, cut = capped(render_parts(parts), max_result_chars)
        return ToolResult.ok(text, server=args["server"], uri=args["uri"], truncated=cut)

    async def list_prompts(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        try:
            rows = source.prompts_of(args.get("server"))
        except KeyError as exc:
            return ToolResult.error(str(exc.args[0]))
        lines = []
        for server, p in rows[:LIST_LIMIT]:
            params = ", ".join(a.name + ("" if a.required else "?") for a in p.arguments)
            lines.append(f"{server} {p.name}({params})" + (f" — {one_line(p.description, 120)}" if p.description else ""))
        return ToolResult.ok("\n".join(lines) if lines else "no prompts", count=len(rows))

    async def get_prompt(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        arguments = {str(k): str(v) for k, v in (args.get("arguments") or {}).items()}
        try:
            result = await source.get_prompt(args["server"], args["name"], arguments)
        except Exception as exc:
            return ToolResult.error(f"mcp.prompt.get failed: {describe_exception(exc)}")
        body = "\n".join(f"[{role}] {part.text}" for role, part in result.messages)
        text, cut = capped(body or "(empty prompt)", max_result_chars)
        return ToolResult.ok(text, server=args["server"], prompt=args["name"], truncated=cut)

    def spec(name: str, summary: str, schema: dict[str, Any], run: Any, example: str) -> ToolSpec:
        return ToolSpec(name=name, summary=summary, args_schema=schema, resource_class=ResourceClass.PURE_READ,
                        run=run, tier=Tier.RARE, example=example, durable=True, plugin=PLUGIN_NAME)

    return [
        spec("mcp.resource.list", "list the resources MCP servers offer (all, or one server's)",
             {"type": "object", "properties": {"server": SERVER_ARG}, "additionalProperties": False},
             list_resources, '{"tool": "mcp.resource.list", "args": {}}'),
        spec("mcp.resource.read", "read one MCP resource by server and uri",
             {"type": "object", "properties": {"server": SERVER_ARG, "uri": {"type": "string"}},
              "required": ["server", "uri"], "additionalProperties": False},
             read_resource, '{"tool": "mcp.resource.read", "args": {"server": "docs", "uri": "file:///a.md"}}'),
        spec("mcp.prompt.list", "list the prompts MCP servers offer (all, or one server's)",
             {"type": "object", "properties": {"server": SERVER_ARG}, "additionalProperties": False},
             list_prompts, '{"tool": "mcp.prompt.list", "args": {}}'),
        spec("mcp.prompt.get", "render one MCP prompt with its arguments",
             {"type": "object", "properties": {"server": SERVER_ARG, "name": {"type": "string"},
                                               "arguments": {"type": "object",
                                                             "additionalProperties": {"type": "string"}}},
              "required": ["server", "name"], "additionalProperties": False},
             get_prompt, '{"tool": "mcp.prompt.get", "args": {"server": "docs", "name": "summary"}}'),
    ]
