"""The sidecar's `mcp_list|add|remove` change the running host's servers live."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
from atomic_agent.plugins.sidecar.sidecar_server import SidecarLimits, SidecarServer
from tests.plugins.mcp.mcp_kit import DEMO_SERVER, mcp_runtime
from tests.plugins.sidecar.sidecar_harness import SchemaCheckedSink


async def test_sidecar_adds_lists_and_removes_servers_live(tmp_path: Path) -> None:
    sink = SchemaCheckedSink(lambda _m: None)
    server = SidecarServer(ProtocolWriter(sink), SidecarLimits(), working_dir=tmp_path)
    runtime = await mcp_runtime(tmp_path / "state", [], ask=server.approvals.ask)
    server.bind(runtime)
    from atomic_agent.plugins.sidecar.protocol_router import handle_item

    async def request(kind: str, **fields):
        before = len(sink.messages)
        await handle_item(server, json.dumps({"id": before + 1, "type": kind, **fields}).encode())
        return [m for m in sink.messages[before:] if m["type"] == "response"][0]

    try:
        assert (await request("mcp_list"))["result"] == {"servers": []}
        definition = {"mcpServers": {"live": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}}
        added = await request("mcp_add", definition=definition)
        assert added["ok"] and added["result"]["servers"][0]["status"] == "up"
        assert "mcp.live.echo" in runtime.registry
        assert "mcp.live.echo" in (await runtime.prompt_plan()).grammar
        duplicate = await request("mcp_add", definition=definition)
        assert duplicate["error"]["code"] == "mcp_invalid_server" and "already configured" in duplicate["error"]["message"]
        bad = await request("mcp_add", definition={"nothing": 1})
        assert bad["error"]["code"] == "mcp_invalid_server"
        listed = (await request("mcp_list"))["result"]["servers"]
        assert [(s["name"], s["status"]) for s in listed] == [("live", "up")]
        removed = await request("mcp_remove", name="live")
        assert removed["result"] == {"name": "live", "removed": True} and "mcp.live.echo" not in runtime.registry
        missing = await request("mcp_remove", name="live")
        assert missing["error"]["code"] == "mcp_server_not_found"
    finally:
        await server.shutdown()
        await runtime.close()
    assert not sink.problems, sink.problems


async def test_sidecar_sends_mcp_status_and_drift_changes_as_event_lines(tmp_path: Path) -> None:
    from atomic_agent.plugins.mcp.mcp_records import ToolMeta
    from atomic_agent.plugins.sidecar.protocol_router import handle_item

    sink = SchemaCheckedSink(lambda _m: None)
    server = SidecarServer(ProtocolWriter(sink), SidecarLimits(), working_dir=tmp_path)
    runtime = await mcp_runtime(tmp_path / "state", [], ask=server.approvals.ask)
    server.bind(runtime)

    def events() -> list[dict]:
        return [m["event"] for m in sink.messages if m["type"] == "event"]

    try:
        live = {"mcpServers": {"live": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}}
        await handle_item(server, json.dumps({"id": 1, "type": "mcp_add", "definition": live}).encode())
        (up,) = [e for e in events() if e["type"] == "mcp_server_up"]
        assert up["server"] == "live" and "mcp.live.echo" in up["tools"] and "sessionId" not in up
        broken = {"mcpServers": {"broken": {"command": str(tmp_path / "no-such-server")}}}
        await handle_item(server, json.dumps({"id": 2, "type": "mcp_add", "definition": broken}).encode())
        (down,) = [e for e in events() if e["type"] == "mcp_server_down"]
        assert down["server"] == "broken" and down["lastError"]
        manager = runtime.service("mcp")
        manager.drift.approve("live", [ToolMeta("echo", "Echo (older text).", {"type": "object"})])
        await manager.refresh("live")
        (drift,) = [e for e in events() if e["type"] == "mcp_tool_drift"]
        assert drift == {"type": "mcp_tool_drift", "server": "live", "tools": ["echo"],
                         "advice": "atomic-agent mcp approve live"}
    finally:
        await server.shutdown()
        await runtime.close()
    assert not sink.problems, sink.problems  # every event line is valid under the published schema
