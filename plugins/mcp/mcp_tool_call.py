"""Run one MCP tool outside the loop (`mcp call`) exactly as the loop runs it: the
registered ToolSpec, schema validation, a context whose approvals go through the
runtime's gate, and the same result cap."""

from __future__ import annotations

import asyncio
import difflib
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ToolContext, ToolResult, approval_gate, args_errors, invoke_tool
from atomic_agent.plugins.mcp.tool_names import qualify

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


async def call_mcp_tool(runtime: RuntimeView, manager: Any, server: str, tool: str, args: Mapping[str, Any],
                        working_dir: Path) -> ToolResult:
    """The tool's result; ValueError (with what to fix) when the call cannot start."""
    status = manager.status(server) if server in manager.names() else None
    if status is None:
        raise ValueError(f"no MCP server named {server!r}; configured: {', '.join(manager.names()) or 'none'}")
    name = qualify(server, tool)
    spec = runtime.registry.get(name)
    if spec is None:
        if tool in status.drifted:
            raise ValueError(f"{tool!r} is new or changed since it was approved and is disabled; review it with "
                             f"`atomic-agent mcp tools {server}`, then `atomic-agent mcp approve {server} {tool}`")
        if status.status != "up":
            raise ValueError(f"server {server!r} is {status.status}: {status.last_error}")
        raw_names = [t.split(".", 2)[2] for t in status.tools]
        close = difflib.get_close_matches(tool, raw_names, n=3, cutoff=0.5)
        raise ValueError(f"server {server!r} has no tool {tool!r}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    problems = args_errors(spec.args_schema, args, limit=10)
    if problems:
        raise ValueError(f"invalid args for {name}: {'; '.join(problems)}")
    session_id = f"mcp-call-{secrets.token_hex(4)}"
    ctx = ToolContext(session_id=session_id, working_dir=working_dir, state_dir=runtime.state_dir,
                      cancelled=asyncio.Event(),
                      request_approval=approval_gate.bind_request_approval(runtime.gate, session_id, name),
                      services={"state_dir": runtime.state_dir, "approval_gate": runtime.gate,
                                "tool_registry": runtime.registry})
    return await invoke_tool(spec, args, ctx, timeout_s=None,
                             summary_chars=runtime.config.agent.tool_result_summary_chars)
