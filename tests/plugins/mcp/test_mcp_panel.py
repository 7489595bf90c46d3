"""The TUI's MCP panel against a real runtime and the real stdio demo MCP server: add by
pasted JSON (keys and mouse), remove with confirmation, drift approval, and readable
notices for bad pastes."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import DataTable, Static, TextArea

from tests.plugins.mcp.mcp_kit import mcp_runtime, stdio_server
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset


def _claude_desktop_paste(name: str) -> str:
    """The server in the `mcpServers` shape Claude Desktop and Cursor use, pretty-printed as pasted."""
    entry = stdio_server(name)["transport"]
    return json.dumps({"mcpServers": {name: {"command": entry["command"], "args": entry["args"]}}}, indent=2)


def _cells(app: PanelHost) -> list[list[str]]:
    table = app.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def _paste(app: PanelHost, pilot, text: str) -> None:
    await pilot.press("n")
    await pilot.pause()
    app.screen.query_one(TextArea).text = text
    await pilot.press("ctrl+s")
    await pilot.pause()


async def test_add_by_pasting_client_json_then_remove_with_confirmation(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    try:
        app = PanelHost(panel_of(runtime, "mcp"), runtime)
        async with app.run_test(size=(140, 40)) as pilot:
            assert "No MCP servers configured" in str(app.query_one("#mcp-detail", Static).render())
            await _paste(app, pilot, _claude_desktop_paste("demo"))
            await app.settle(pilot)
            assert app.messages("error") == []
            rows = _cells(app)
            assert rows[0][:2] == ["demo", "up"] and int(rows[0][4]) >= 3
            assert "mcp.demo.echo" in runtime.registry  # live: the next step sees the tool
            saved = json.loads((tmp_path / "state" / "config.json").read_text())
            assert [s["name"] for s in saved["mcp"]["servers"]] == ["demo"]  # persisted
            assert any("demo: up" in m for m in app.messages())

            await pilot.press("enter")  # details of the selected server
            assert "mcp.demo.echo" in str(app.query_one("#mcp-detail", Static).render())

            await pilot.press("d")
            await pilot.press("n")  # the confirmation is declined: nothing happens
            await app.settle(pilot)
            assert _cells(app)[0][0] == "demo" and "mcp.demo.echo" in runtime.registry

            await pilot.press("d")
            await pilot.press("y")
            await app.settle(pilot)
            assert _cells(app) == [] and "mcp.demo.echo" not in runtime.registry
            assert json.loads((tmp_path / "state" / "config.json").read_text())["mcp"]["servers"] == []
    finally:
        await runtime.close()


async def test_malformed_and_unusable_pastes_give_readable_notices_and_change_nothing(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    try:
        app = PanelHost(panel_of(runtime, "mcp"), runtime)
        async with app.run_test(size=(140, 40)) as pilot:
            await _paste(app, pilot, '{"mcpServers": {"x": {"command": "npx",, }}')
            await _paste(app, pilot, '{"mcpServers": {"x": {"command": "npx", "args": "not a list"}}}')
            await _paste(app, pilot, '["just", "a", "list"]')
            await _paste(app, pilot, "   ")
            await app.settle(pilot)
            errors = app.messages("error")
            assert len(errors) == 3, app.notices
            assert "not valid JSON" in errors[0] and "line 1" in errors[0]
            assert "args must be a list of strings" in errors[1]
            assert "expected a JSON object" in errors[2]
            assert any("Nothing was pasted" in m for m in app.messages("warning"))
            assert app.job_titles == [] and _cells(app) == []
            assert runtime.service("mcp").statuses() == []
    finally:
        await runtime.close()


async def test_a_failing_server_stays_configured_and_shows_down(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [])
    try:
        app = PanelHost(panel_of(runtime, "mcp"), runtime)
        async with app.run_test(size=(140, 40)) as pilot:
            await _paste(app, pilot, '{"name": "broken", "command": "/nonexistent/bin/mcp"}')
            await app.settle(pilot)
            assert _cells(app)[0][:2] == ["broken", "down"]
            assert any("broken is down" in m and "kept in config.json" in m for m in app.messages("warning"))
            await _paste(app, pilot, '{"name": "broken", "command": "/other"}')  # same name again
            await app.settle(pilot)
            assert any("Cannot add broken" in m for m in app.messages("error"))
    finally:
        await runtime.close()


async def test_drifted_tools_are_shown_and_approved_by_key_and_rows_work_by_mouse(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = await mcp_runtime(state, [stdio_server("alpha"), stdio_server("demo")])
    await first.close()  # both catalogs accepted as they were
    runtime = await mcp_runtime(state, [stdio_server("alpha"),
                                        stdio_server("demo", env={"DEMO_DESCRIPTION": "Echo, changed."})])
    try:
        app = PanelHost(panel_of(runtime, "mcp"), runtime)
        async with app.run_test(size=(140, 40)) as pilot:
            assert [r[0] for r in _cells(app)] == ["alpha", "demo"]
            await pilot.press("a")  # alpha has nothing to approve
            assert any("alpha has no new or changed tools" in m for m in app.messages())
            table = app.query_one(DataTable)
            await pilot.click(DataTable, offset=row_offset(table, 1))  # first click: select only
            assert table.cursor_row == 1
            assert "alpha" in str(app.query_one("#mcp-detail", Static).render())  # not activated yet
            await pilot.click(DataTable, offset=row_offset(table, 1))  # second click: activate (Enter)
            detail = str(app.query_one("#mcp-detail", Static).render())
            assert "held back" in detail and "echo: Echo, changed." in detail  # the new definition, in full
            assert '"text"' in detail and "readOnlyHint" in detail
            assert _cells(app)[1][5] == "1" and "mcp.demo.echo" not in runtime.registry
            await pilot.press("a")
            await app.settle(pilot)
            assert "mcp.demo.echo" in runtime.registry and _cells(app)[1][5] == "-"
            assert any("tool definition(s) of demo" in m for m in app.messages()), app.notices
    finally:
        await runtime.close()


async def test_a_server_that_crashes_shows_down_without_a_reload_and_r_reconnects_it(tmp_path: Path) -> None:
    import asyncio

    from atomic_agent.api import make_tool_context

    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fragile", trust="pure_read", reconnectAttempts=0)])
    try:
        app = PanelHost(panel_of(runtime, "mcp"), runtime)
        async with app.run_test(size=(140, 40)) as pilot:
            assert _cells(app)[0][:2] == ["fragile", "up"]
            await runtime.registry.get("mcp.fragile.crash").run({}, make_tool_context(tmp_path))
            for _ in range(200):  # the manager notices the exit, the panel hears it
                await pilot.pause()
                if _cells(app)[0][1] == "down":
                    break
                await asyncio.sleep(0.05)
            assert _cells(app)[0][1] == "down" and app.notices == []  # no key was pressed
            await pilot.press("r")
            await app.settle(pilot)
            assert _cells(app)[0][1] == "up" and "mcp.fragile.echo" in runtime.registry
            assert any("fragile: up" in m for m in app.messages())
    finally:
        await runtime.close()
