"""The mouse contract, driven the way a terminal drives it: reports posted to the app (not
the pilot's shortcut past it), so the live switch really gates them. First click selects,
second activates; the wheel moves the selection like the arrow keys; tui.mouse, --no-mouse
and /mouse on|off; the text-selection window and the drag on dead content that opens it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual import events
from textual.widget import Widget
from textual.widgets import TabbedContent

from atomic_agent.plugins.tui.mouse_interaction import RowList
from tests.plugins.tui.tui_harness import tui_app, type_and_send, wait_for


async def report(pilot: Any, app: Any, kind: type[events.MouseEvent], target: str | Widget,
                 offset: tuple[int, int] = (1, 0), button: int = 1) -> None:
    """One mouse report as the terminal driver posts it (through App.on_event)."""
    widget = app.screen.query_one(target) if isinstance(target, str) else target
    x, y = widget.region.offset + offset
    app.post_message(kind(widget=None, x=x, y=y, delta_x=0, delta_y=0, button=button, shift=False, meta=False,
                          ctrl=False, screen_x=x, screen_y=y))
    await pilot.pause()


async def click(pilot: Any, app: Any, target: str | Widget, offset: tuple[int, int] = (1, 0)) -> None:
    await report(pilot, app, events.MouseDown, target, offset)
    await report(pilot, app, events.MouseUp, target, offset)
    await pilot.pause(0.05)


def active(app: Any) -> str:
    return app.query_one(TabbedContent).active


async def test_clicks_reach_widgets_only_while_the_mouse_is_on_and_the_switch_is_saved(tmp_path: Path) -> None:
    async with tui_app(tmp_path, [], mouse=False) as (app, pilot, runtime):  # as --no-mouse
        assert not app.mouse_switch.reporting
        await click(pilot, app, "#--content-tab-panel-tools")
        assert active(app) == "chat"  # swallowed: the terminal keeps its selection
        assert "mouse off" in str(app.query_one("#status").render())
        await type_and_send(pilot, app, "/mouse on")
        assert app.mouse_switch.reporting
        assert json.loads((runtime.state_dir / "config.json").read_text())["tui"]["mouse"] is True
        await click(pilot, app, "#--content-tab-panel-tools")
        assert active(app) == "panel-tools"
        app.action_show_tab("chat")
        await type_and_send(pilot, app, "/mouse off")
        assert json.loads((runtime.state_dir / "config.json").read_text())["tui"]["mouse"] is False
        await click(pilot, app, "#--content-tab-panel-tools")
        assert active(app) == "chat"


async def test_tui_mouse_false_in_config_starts_with_reporting_off(tmp_path: Path) -> None:
    async with tui_app(tmp_path, [], config={"tui": {"mouse": False}}) as (app, _pilot, _runtime):
        assert not app.mouse_switch.enabled


async def test_first_click_selects_second_activates_and_the_wheel_moves_like_the_arrows(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        app.action_show_tab("tools")
        await pilot.pause()
        table = app.query_one("#tools-table", RowList)
        schema = app.query_one("#tool-schema")
        await click(pilot, app, table, (2, 3))  # header is row 0: this is the third tool
        assert table.cursor_row == 2 and str(schema.render()) == ""  # selected, not activated
        await click(pilot, app, table, (2, 3))
        assert str(schema.render()).startswith(table.coordinate_to_cell_key((2, 0))[0].value)
        await report(pilot, app, events.MouseScrollDown, table, (2, 3), button=0)
        assert table.cursor_row == 3
        await report(pilot, app, events.MouseScrollUp, table, (2, 3), button=0)
        await report(pilot, app, events.MouseScrollUp, table, (2, 3), button=0)
        assert table.cursor_row == 1
        await pilot.press("down")  # the same handler: keyboard and wheel agree
        assert table.cursor_row == 2


async def test_the_selection_window_suspends_reporting_and_comes_back_by_itself(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        app.mouse_switch.suspend(seconds=0.3)
        assert app.mouse_switch.enabled and not app.mouse_switch.reporting
        await click(pilot, app, "#--content-tab-panel-tools")
        assert active(app) == "chat"  # the terminal owns the mouse during the window
        await wait_for(pilot, lambda: app.mouse_switch.reporting)
        await click(pilot, app, "#--content-tab-panel-tools")
        assert active(app) == "panel-tools"


async def test_mouse_off_during_the_window_stays_off(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        app.mouse_switch.suspend(seconds=0.2)
        await type_and_send(pilot, app, "/mouse off")
        await pilot.pause(0.4)
        assert not app.mouse_switch.reporting and not app.mouse_switch.enabled


async def test_f9_and_slash_mouse_select_open_the_window(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        await type_and_send(pilot, app, "/mouse select")
        assert app.mouse_switch.suspended
        app.mouse_switch._end_window()
        await pilot.press("f9")
        assert app.mouse_switch.suspended


async def test_a_drag_on_dead_content_opens_the_window_and_one_on_a_control_does_not(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        app.action_show_tab("tools")
        await pilot.pause()
        table = app.query_one("#tools-table", RowList)
        await report(pilot, app, events.MouseDown, table, (2, 2))
        await report(pilot, app, events.MouseMove, table, (4, 2))
        await report(pilot, app, events.MouseUp, table, (4, 2))
        assert not app.mouse_switch.suspended  # a press on a row is a click, its drag is not a selection
        hint = app.query_one("ToolsPanel .hint")
        await report(pilot, app, events.MouseDown, hint, (1, 0))
        await report(pilot, app, events.MouseMove, hint, (5, 0))
        assert app.mouse_switch.suspended
