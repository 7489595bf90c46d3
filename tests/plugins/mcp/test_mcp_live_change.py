"""Variant γ: servers added and removed while the runtime runs (idempotent on the name),
the next step's prompt and grammar rebuilt from the live set; and a server's
`notifications/tools/list_changed` refreshing its catalog."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.mcp.pasted_config import parse_pasted_servers
from tests.plugins.mcp.mcp_kit import mcp_runtime, stdio_server


def _server(name: str, **extra):
    return parse_pasted_servers(json.dumps(stdio_server(name, **extra)))[0]


def _grammar_names(grammar: str) -> str:
    """The tool-name alternations (batchable and lone tools: gated MCP tools run alone)."""
    return "\n".join(ln for ln in grammar.splitlines() if ln.startswith(("step-tool-name ::= ", "lone-tool-name ::= ")))


async def test_live_add_and_remove_rebuild_the_next_steps_prompt_and_grammar(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    manager = runtime.service("mcp")
    try:
        before = await runtime.prompt_plan()
        assert "mcp." not in before.stable_prefix_for(tmp_path) and "mcp." not in before.grammar
        status = await manager.add_server(_server("late"))
        assert status.status == "up" and "mcp.late.echo" in status.tools
        added = await runtime.prompt_plan()
        assert "mcp.late.echo(text: string)" in added.stable_prefix_for(tmp_path)
        assert '\\"mcp.late.echo\\"' in _grammar_names(added.grammar)
        assert '\\"mcp.resource.list\\"' in _grammar_names(added.grammar)
        saved = json.loads((tmp_path / "state" / "config.json").read_text())
        assert [s["name"] for s in saved["mcp"]["servers"]] == ["late"]  # persisted
        assert await manager.remove_server("late") is True
        removed = await runtime.prompt_plan()
        assert "mcp." not in removed.stable_prefix_for(tmp_path) and "mcp." not in removed.grammar
        assert json.loads((tmp_path / "state" / "config.json").read_text())["mcp"]["servers"] == []
    finally:
        await runtime.close()


async def test_live_add_is_idempotent_on_the_name_and_remove_of_an_absent_name_is_a_no_op(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    manager = runtime.service("mcp")
    try:
        first = await manager.add_live(_server("same"))
        connection = manager._entries["same"].connection
        again = await manager.add_live(_server("same", trust="pure_read"))
        assert again == first and manager._entries["same"].connection is connection  # short-circuit, no reconnect
        generation = runtime.registry.generation
        assert await manager.remove_live("absent") is False and runtime.registry.generation == generation
        assert await manager.remove_live("same") is True and await manager.remove_live("same") is False
        assert connection.closed.is_set() and "mcp.same.echo" not in runtime.registry
        round_trip = await manager.add_live(_server("same"))
        assert round_trip.tools == first.tools
    finally:
        await runtime.close()


async def test_live_add_of_a_failing_server_is_isolated(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("steady")])
    manager = runtime.service("mcp")
    try:
        broken = parse_pasted_servers(json.dumps({"name": "broken", "command": "/nonexistent/bin/mcp"}))[0]
        status = await manager.add_live(broken)
        assert status.status == "down" and status.tools == ()
        assert manager.status("steady").status == "up" and "mcp.steady.echo" in runtime.registry
        result = await runtime.registry.get("mcp.steady.echo").run({"text": "ok"}, make_tool_context(tmp_path))
        assert result.summary == "echo: ok"
    finally:
        await runtime.close()


async def test_tools_list_changed_refreshes_that_servers_catalog(tmp_path: Path) -> None:
    """The server announces a new tool: the catalog is refreshed and the tool is held as new
    (the operator never saw it) until approved, then it reaches the next step's prompt."""
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("grower"), stdio_server("other")])
    try:
        manager = runtime.service("mcp")
        assert "mcp.grower.fresh" not in runtime.registry
        result = await runtime.registry.get("mcp.grower.grow").run({}, make_tool_context(tmp_path))
        assert result.summary == "grown"
        for _ in range(200):  # the refresh runs off the notification, after the call returned
            if "fresh" in manager.status("grower").drifted:
                break
            await asyncio.sleep(0.05)
        assert manager.status("grower").drifted == ("fresh",) and "mcp.grower.fresh" not in runtime.registry
        generation = runtime.registry.generation
        assert await manager.approve("grower", "fresh") == ["fresh"]
        assert "mcp.grower.fresh" in runtime.registry and runtime.registry.generation > generation
        assert "mcp.other.fresh" not in runtime.registry
        plan = await runtime.prompt_plan()
        assert "mcp.grower.fresh(word: string)" in plan.stable_prefix_for(tmp_path)
        fresh = await runtime.registry.get("mcp.grower.fresh").run({"word": "leaf"}, make_tool_context(tmp_path))
        assert fresh.summary == "fresh leaf"
    finally:
        await runtime.close()
