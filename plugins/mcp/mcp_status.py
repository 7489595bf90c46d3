"""MCP's lines of `atomic-agent status`: each configured server, enabled or not, and the tools
held back since their definitions changed (the fleet's, on its database, when storage.url
names one). Nothing is connected or written here (a host connects its servers; serve's own
status lines say which are up in it, and `mcp list` connects to check)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def status_lines(state_dir: Path, config: Any, plugin_host: Any = None) -> list[dict[str, Any]]:
    from atomic_agent.api import SessionStoreError

    from .drift_store import DriftStore
    from .drift_table import DriftSchemaPending
    from .server_config import MCP_BLOCK, McpConfig

    block = config.blocks.get(MCP_BLOCK) if config is not None else None
    servers = block.servers if isinstance(block, McpConfig) else ()
    drifted: dict[str, dict[str, Any]] = {}
    unread: str | None = None  # why the fleet's drift records could not be read
    if servers:
        try:
            drifted = DriftStore.for_report(state_dir, config, plugin_host).drifted()
        except DriftSchemaPending:
            pass  # no host of the fleet recorded a catalog yet: nothing is held back
        except SessionStoreError as exc:
            unread = str(exc)
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
    if unread is not None:
        lines.append({"section": "channels", "name": "mcp drift records", "state": "warn",
                      "summary": "the fleet's drift records could not be read",
                      "problems": [f"mcp: which tools are held back is unknown: {unread}"]})
    return lines
