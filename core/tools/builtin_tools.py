"""The core's own tools: `reply` ends the turn, `finish` ends the session, `tool.view`
loads a rare tool's full descriptor into the session (shown under ### loaded-tools),
`ask_user` asks the person a structured question (ask_user_tool)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.hook_records import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec

REPLY_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
FINISH_SCHEMA = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
VIEW_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

LOAD_TOOL_EFFECT = "loadTool"


async def _terminal(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    # terminals are handled by the step executor; running one directly is a no-op echo
    return ToolResult.ok(str(args.get("text") or args.get("summary") or ""))


async def _view_tool(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    name = args.get("name")
    registry = ctx.services.get("tool_registry")
    if not isinstance(name, str) or registry is None or registry.get(name) is None:
        known = ", ".join(s.name for s in registry.rare()) if registry is not None else ""
        return ToolResult.error(f"unknown tool {name!r}; rare tools: {known}")
    return ToolResult.ok(f"loaded {name}; its full schema is now listed under loaded-tools, so call it next", **{LOAD_TOOL_EFFECT: name})


def builtin_tool_specs() -> list[ToolSpec]:
    from atomic_agent.tools.ask_user_tool import ask_user_spec

    return [
        ToolSpec("reply", "Answer the user and end the turn.", REPLY_SCHEMA, ResourceClass.TERMINAL, _terminal,
                 example='{"tool": "reply", "args": {"text": "Done."}}'),
        ToolSpec("finish", "End the whole session with a summary.", FINISH_SCHEMA, ResourceClass.TERMINAL,
                 _terminal),
        ToolSpec("tool.view", "Load a rare tool's full schema before calling it.", VIEW_SCHEMA,
                 ResourceClass.PURE_READ, _view_tool, tier=Tier.FREQUENT,
                 durable=True),  # only looks a spec up (the step applies the load): safe to run again
        ask_user_spec(),
    ]
