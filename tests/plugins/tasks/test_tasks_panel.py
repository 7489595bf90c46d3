"""The TUI's Tasks panel against a real runtime with the tasks plugin: create through the
form, details, run now, cancel (with a confirmation for recurring tasks), the status filter,
mouse rows, and notices for bad input."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Input, Static

from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset
from tests.turns.turn_kit import answering_provider, replies


def _cells(app: PanelHost) -> list[list[str]]:
    table = app.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _detail(app: PanelHost) -> str:
    return str(app.query_one("#tasks-detail", Static).render())


async def _create(app: PanelHost, pilot, message: str, schedule: str) -> None:
    await pilot.press("n")
    await pilot.pause()
    app.screen.query_one("#task-message", Input).value = message
    app.screen.query_one("#task-schedule", Input).value = schedule
    await pilot.press("ctrl+s")
    await pilot.pause()


async def test_create_show_run_now_and_cancel_by_keys(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime = await task_runtime(tmp_path, answering_provider(), clock)
    try:
        app = PanelHost(panel_of(runtime, "tasks"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            assert "No tasks" in _detail(app)
            await _create(app, pilot, "water the plants", "in 30")
            clock.advance(1000)  # the list is oldest first
            await _create(app, pilot, "check the feed", "every 3600")
            assert app.messages("error") == []
            rows = _cells(app)
            assert [(r[1], r[2], r[5]) for r in rows] == [("pending", rows[0][2], "water the plants"),
                                                          ("pending", "every 3600s", "check the feed")]
            assert rows[0][2].startswith("at ")
            first = rows[0][0]

            await pilot.press("enter")
            assert f"task {first} — pending" in _detail(app) and "message: water the plants" in _detail(app)

            await pilot.press("R")  # run now, though it is due in 30 minutes
            await app.settle(pilot)
            task = runtime.service("tasks").store.get(first)
            assert task.status == "completed" and replies(runtime, task.session_id) == ["re: water the plants"]
            assert _cells(app)[0][1] == "completed"
            assert any(f"Task {first}: succeeded" in m for m in app.messages()), app.notices

            await pilot.press("R")  # a finished task cannot run again
            assert any("only a pending task can run now" in m for m in app.messages("warning"))

            await pilot.press("down", "c")  # recurring: asks first
            await pilot.press("n")
            assert runtime.service("tasks").store.get(rows[1][0]).status == "pending"
            await pilot.press("c")
            await pilot.press("y")
            assert runtime.service("tasks").store.get(rows[1][0]).status == "cancelled"
            assert _cells(app)[1][1] == "cancelled"

            await pilot.press("f")  # active only: nothing left
            assert _cells(app) == [] and "filter: active" in str(app.query_one("#tasks-filter", Static).render())
            await pilot.press("f")  # finished
            assert [r[1] for r in _cells(app)] == ["completed", "cancelled"]
    finally:
        await runtime.close()


async def test_bad_form_input_gives_notices_and_creates_nothing(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime = await task_runtime(tmp_path, answering_provider(), clock)
    try:
        app = PanelHost(panel_of(runtime, "tasks"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await _create(app, pilot, "   ", "")
            await _create(app, pilot, "tidy up", "tomorrow-ish")
            await _create(app, pilot, "tidy up", "cron 61 * * * *")
            await _create(app, pilot, "tidy up", "at yesterday")
            errors = app.messages("error")
            assert len(errors) == 4, app.notices
            assert errors[0].startswith("Invalid message:")
            assert "is not a schedule" in errors[1] and "every SECONDS" in errors[1]
            assert errors[2].startswith("Invalid schedule") or errors[2].startswith("Invalid expression"), errors[2]
            assert "not an ISO 8601 time" in errors[3]
            assert _cells(app) == [] and runtime.service("tasks").store.list() == []
            await pilot.press("c")  # nothing selected
            assert any("No task is selected" in m for m in app.messages("warning"))
    finally:
        await runtime.close()


async def test_rows_select_on_first_click_and_open_on_the_second(tmp_path: Path) -> None:
    clock = FakeClock()
    runtime = await task_runtime(tmp_path, answering_provider(), clock)
    service = runtime.service("tasks")
    service.create("one", schedule={"kind": "at", "at": clock.now + 600_000})
    clock.advance(1000)
    second = service.create("two", schedule={"kind": "at", "at": clock.now + 600_000})
    try:
        app = PanelHost(panel_of(runtime, "tasks"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            table = app.query_one(DataTable)
            await pilot.click(DataTable, offset=row_offset(table, 1))
            assert table.cursor_row == 1 and "message: two" not in _detail(app)
            await pilot.click(DataTable, offset=row_offset(table, 1))
            assert f"task {second.id}" in _detail(app) and "message: two" in _detail(app)
    finally:
        await runtime.close()
