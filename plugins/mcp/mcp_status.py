"""MCP's lines of `atomic-agent status`: each configured server, enabled or not, and the tools
held back since their definitions changed. Nothing is connected here (a host connects its
servers; serve's own status lines say which are up in it, and `mcp list` connects to check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def status_lines(state_dir: Path, config: Any) -> list[dict[str, Any]]:
    from .drift_store import DriftStore
    from .server_config import MCP_BLOCK, McpConfig

    block = config.blocks.get(MCP_BLOCK) if config is not None else None
    servers = block.servers if isinstance(block, McpConfig) else ()
    drifted = DriftStore(state_dir).drifted() if servers else {}
    lines = []
    for server in servers:
        held = sorted(drifted.get(server.name, ()))
        where = server.transport.command if server.transport.kind == "stdio" else server.transport.url
        if not server.enabled:
            state, summary = "off", f"disabled ({server.transport.kind}); `atomic-agent mcp enable {server.name}`"
        else:
            state = "warn" if held else "ok"
            summary = (f"enabled, {server.transport.kind} {where}; connects in a host "
                       f"(`atomic-agent mcp list` checks it now)")
        problems = [f"mcp {server.name}: {len(held)} tool(s) changed since approval, disabled until reviewed: "
                    f"`atomic-agent mcp diff {server.name}`, then `atomic-agent mcp approve {server.name}`"] \
            if held else []
        lines.append({"section": "channels", "name": f"mcp {server.name} (config)", "state": state,
                      "summary": summary, "problems": problems,
                      "detail": {"name": server.name, "enabled": server.enabled,
                                 "transport": server.transport.kind, "drifted": held}})
    return lines
