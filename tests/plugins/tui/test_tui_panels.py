"""Every core tab reached by keyboard (its F-key, /tab, the palette) and by mouse (its tab
label), and operated both ways: Sessions open/export/delete, Tools schema, Privacy ladder
and grant revoke, Logs showing the llama-server log and runtime events. A plugin's own
TuiPanel is mounted as a tab the same way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import RichLog, Static, TabbedContent

from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec, TuiPanel, hookimpl
from atomic_agent.plugins.tui.confirm_modal import ConfirmModal
from atomic_agent.plugins.tui.mouse_interaction import RowList
from tests.plugins.tui.tui_harness import calls, chat_text, tui_app, type_and_send, wait_for

CORE_TABS = {"sessions": "f2", "tools": "f3", "privacy": "f4", "logs": "f5"}


def active(app: Any) -> str:
    return app.query_one(TabbedContent).active


async def test_each_core_tab_is_reachable_by_its_key_by_slash_tab_and_by_clicking_its_label(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        assert [p.name for p in app.panels] == ["sessions", "tools", "privacy", "logs"]
        for name, key in CORE_TABS.items():
            await pilot.press(key)
            assert active(app) == f"panel-{name}"
            await pilot.press("f1")
            assert active(app) == "chat"
            await type_and_send(pilot, app, f"/tab {name}")
            assert active(app) == f"panel-{name}"
            await pilot.press("f1")
            await pilot.click(f"#--content-tab-panel-{name}")
            assert active(app) == f"panel-{name}"
            await pilot.click("#--content-tab-chat")
            assert active(app) == "chat"


async def test_a_plugins_panel_is_a_tab_and_a_failing_one_does_not_take_the_app_down(tmp_path: Path) -> None:
    from textual.widgets import Label

    class PanelPlugin:
        @hookimpl
        def register_services(self) -> list[ServiceSpec]:
            good = TuiPanel("weather", "Weather", lambda ctx: Label("sunny", id="weather-label"), order=50, key="f7")

            def broken(ctx: Any) -> Any:
                raise RuntimeError("no forecast")

            bad = TuiPanel("broken", "Broken", broken, order=60)
            return [ServiceSpec(TUI_PANEL_SERVICE, factory=lambda rt: (good, bad), multiple=True)]

    async with tui_app(tmp_path, [], extra_plugins={"weather": PanelPlugin()}) as (app, pilot, _runtime):
        names = [p.name for p in app.panels]
        assert names.index("weather") == names.index("privacy") + 1  # order 50 sits between 30 and 90
        await pilot.press("f7")
        assert active(app) == "panel-weather"
        await type_and_send(pilot, app, "/tab broken")
        await pilot.press("f1")
        await type_and_send(pilot, app, "/tab broken")
        pane_text = " ".join(str(w.render()) for w in app.query("#panel-broken Static"))
        assert "could not be built: RuntimeError: no forecast" in pane_text


async def test_sessions_tab_opens_exports_and_deletes_by_keyboard_and_mouse(tmp_path: Path) -> None:
    script = [calls(("reply", {"text": "first reply"})), calls(("reply", {"text": "second reply"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        await type_and_send(pilot, app, "hello one")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        first = app.orchestrator.session_id
        await type_and_send(pilot, app, "/new")
        await type_and_send(pilot, app, "hello two")
        await wait_for(pilot, lambda: not app.orchestrator.busy and app.orchestrator.session_id != first)
        second = app.orchestrator.session_id
        await pilot.press("f2")
        table = app.query_one("#sessions-table", RowList)
        await wait_for(pilot, lambda: table.row_count == 2)
        # mouse: first click selects the second row, a second click opens it
        keys = [table.coordinate_to_cell_key((i, 0))[0].value for i in range(2)]
        row_of_first = keys.index(first)
        await pilot.click("#sessions-table", offset=(3, 1 + row_of_first))
        assert active(app) == "panel-sessions" and table.cursor_row == row_of_first
        await pilot.click("#sessions-table", offset=(3, 1 + row_of_first))
        await wait_for(pilot, lambda: active(app) == "chat")
        assert app.orchestrator.session_id == first
        assert "hello one" in chat_text(app) and "first reply" in chat_text(app)  # its history is shown
        # keyboard: export, then delete with the confirm
        await pilot.press("f2")
        table.focus()
        table.move_cursor(row=keys.index(second))
        await pilot.press("e")
        exported = json.loads((runtime.state_dir / "exports" / f"session-{second}.json").read_text())
        assert exported["id"] == second and any(e.get("text") == "hello two" for e in exported["entries"])
        await pilot.press("d")
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("y")
        await wait_for(pilot, lambda: table.row_count == 1)
        assert not runtime.sessions.exists(second) and runtime.sessions.exists(first)


async def test_tools_tab_shows_a_schema_by_enter_and_by_second_click(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        await pilot.press("f3")
        table = app.query_one("#tools-table", RowList)
        names = [table.coordinate_to_cell_key((i, 0))[0].value for i in range(table.row_count)]
        assert "t.gated" in names and "reply" in names
        table.focus()
        table.move_cursor(row=names.index("t.gated"))
        await pilot.press("enter")
        schema = str(app.query_one("#tool-schema", Static).render())
        assert "approval shell" in schema and '"path"' in schema
        row = names.index("t.read")
        table.scroll_to(y=0, animate=False)
        await pilot.pause()
        await pilot.click("#tools-table", offset=(2, 1 + row - int(table.scroll_y)))
        await pilot.click("#tools-table", offset=(2, 1 + row - int(table.scroll_y)))
        assert "t.read — Read a thing." in str(app.query_one("#tool-schema", Static).render())


async def test_privacy_tab_sets_the_level_saved_and_live_and_asks_before_level_five(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, runtime):
        await pilot.press("f4")
        ladder = app.query_one("#ladder", RowList)
        ladder.focus()
        await pilot.press("3")
        assert runtime.gate.level == 3
        assert json.loads((runtime.state_dir / "config.json").read_text())["agent"]["approvalLevel"] == 3
        await pilot.press("right")
        assert runtime.gate.level == 4
        await pilot.press("5")
        assert isinstance(app.screen, ConfirmModal) and "asks for nothing" in app.screen.question
        await pilot.press("n")
        assert runtime.gate.level == 4
        # mouse: select the level-2 row, then click it again to apply
        await pilot.click("#ladder", offset=(4, 2))
        assert runtime.gate.level == 4 and ladder.cursor_row == 1
        await pilot.click("#ladder", offset=(4, 2))
        assert runtime.gate.level == 2
        assert "level 2 workspace" in str(app.query_one("#status").render())


async def test_privacy_tab_revokes_one_grant(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, runtime):
        runtime.gate.grant("s1", "shell")
        runtime.gate.grant("s1", "http")
        await pilot.press("f4")
        grants = app.query_one("#grants", RowList)
        assert grants.row_count == 2
        grants.focus()
        grants.move_cursor(row=0)
        await pilot.press("x")
        left = [(g["kind"], g["value"]) for g in runtime.gate.grants_snapshot()]
        assert len(left) == 1 and grants.row_count == 1


async def test_logs_tab_tails_the_llama_log_and_lists_runtime_events(tmp_path: Path) -> None:
    script = [calls(("reply", {"text": "hi"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        log = runtime.state_dir / "llamacpp" / "llama-server.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("main: server is listening on 127.0.0.1:8080\n")
        await type_and_send(pilot, app, "hello")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        await pilot.press("f5")
        panel = app.query_one("LogsPanel")
        panel.poll_llama_log()
        await pilot.pause()
        llama = "\n".join(line.text for line in app.query_one("#llama-log", RichLog).lines)
        events = "\n".join(line.text for line in app.query_one("#event-log", RichLog).lines)
        assert "server is listening" in llama
        assert "turn_started" in events and "turn_finished" in events


async def test_with_every_installed_plugin_all_tabs_build(tmp_path: Path) -> None:
    from atomic_agent.api import ScriptedProvider, runtime_for_test
    from atomic_agent.plugins.tui.tui_app import AtomicTui

    runtime = await runtime_for_test(tmp_path / "state", installed=True, provider=ScriptedProvider([]))
    try:
        app = AtomicTui(runtime, working_dir=tmp_path)
        async with app.run_test(size=(110, 34)) as pilot:
            await pilot.pause(0.3)
            for panel in app.panels:
                app.action_show_tab(panel.name)
                await pilot.pause()
            failed = [e.text for e in app.event_log.entries if "failed to build" in e.text]
            assert not failed and {"sessions", "tools", "privacy", "logs"} <= {p.name for p in app.panels}
    finally:
        await runtime.close()
