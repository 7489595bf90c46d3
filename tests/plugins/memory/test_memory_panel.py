"""The TUI's Memory panel against a real runtime with the memory plugins: profile with
history, notes with links, the links list, phase switches and embedding status, mouse rows,
and that nothing the panel offers writes."""

from __future__ import annotations

import importlib
from pathlib import Path

from textual.widgets import DataTable, Static

from atomic_agent.api import runtime_for_test
from tests.plugins.tui_panel_host import PanelHost, panel_of, row_offset

PLUGINS = ("memory", "memory_profile", "memory_notes", "memory_links")


async def _runtime(state: Path, config: dict | None = None):
    plugins = {name: importlib.import_module(f"atomic_agent.plugins.{name}") for name in PLUGINS}
    return await runtime_for_test(state, plugins=plugins, config=config)


def _cells(app: PanelHost) -> list[list[str]]:
    table = app.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _detail(app: PanelHost) -> str:
    return str(app.query_one("#memory-detail", Static).render())


def _seed(runtime) -> list[int]:
    memory = runtime.service("memory")
    profile = memory.profile_store()
    profile.set("editor", "vim", now=1_000)
    profile.set("editor", "helix", now=2_000)  # the history keeps vim
    profile.set("timezone", "Europe/Berlin", pinned=False, keywords=["time"])
    notes = memory.note_store()
    ids = [notes.store(text, ["deploy"]).note.id for text in ("deploys run on fridays", "the friday deploy broke CI")]
    memory.link_store().add(ids[1], ids[0], "CAUSED_BY", source="tool")
    return ids


def _counts(runtime) -> tuple[int, int, int]:
    memory = runtime.service("memory")
    return (memory.profile_store().count(active_only=False), memory.note_store().count(), memory.link_store().count())


async def test_channels_show_profile_history_notes_links_and_status(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path / "state", config={"memoryLinks": {"enabled": True}})
    try:
        first, second = _seed(runtime)
        before = _counts(runtime)
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            assert [(r[0], r[1], r[2], r[3]) for r in _cells(app)] == [("editor", "helix", "yes", "2"),
                                                                        ("timezone", "Europe/Berlin", "no", "1")]
            await pilot.press("enter")
            detail = _detail(app)
            assert "2 version(s)" in detail and "vim" in detail and "[active] helix" in detail
            assert detail.index("vim") < detail.index("helix")

            await pilot.press("]")  # notes, newest first
            assert [r[0] for r in _cells(app)] == [str(second), str(first)]
            await pilot.press("enter")
            assert "the friday deploy broke CI" in _detail(app)
            assert f"-> CAUSED_BY #{first} deploys run on fridays" in _detail(app)

            await pilot.press("3")  # links
            assert _cells(app) == [[f"#{second}", "CAUSED_BY", f"#{first}", "1", "tool"]]
            await pilot.press("enter")
            assert "deploys run on fridays" in _detail(app) and "broke CI" in _detail(app)

            await pilot.press("]")  # status
            states = {r[0]: r[1] for r in _cells(app)}
            assert states["profile"] == "on" and states["notes"] == "on" and states["links (v2 phase 2)"] == "on"
            assert states["hybrid recall (embeddings)"] == "not installed"
            await pilot.press("]")  # wraps to profile
            assert _cells(app)[0][0] == "editor"

            # nothing on the panel writes: every other key is inert on the data
            for key in ("d", "delete", "x", "backspace", "f", "g", "v", "e", "n", "ctrl+d"):
                await pilot.press(key)
            assert _counts(runtime) == before and app.messages("error") == []
    finally:
        await runtime.close()


async def test_without_memory_sqlite_the_lists_are_empty_and_the_file_is_not_made(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path / "state")
    try:
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            assert _cells(app) == [] and "memory.sqlite does not exist" in _detail(app)
            await pilot.press("2")
            assert _cells(app) == [] and "memory.sqlite does not exist" in _detail(app)
            await pilot.press("4")
            assert len(_cells(app)) >= 3  # the switches are config, shown without the database
            assert not (tmp_path / "state" / "memory.sqlite").exists()
    finally:
        await runtime.close()


async def test_a_corrupt_database_is_a_notice_not_a_crash(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(parents=True)
    (state / "memory.sqlite").write_bytes(b"this is not a sqlite database" * 100)
    runtime = await _runtime(state)
    try:
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.pause()
            assert any("Memory cannot be read" in m for m in app.messages("error")), app.notices
            await pilot.press("4")  # the status channel still works
            assert len(_cells(app)) >= 3
    finally:
        await runtime.close()


async def test_rows_select_on_first_click_and_open_on_the_second(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path / "state")
    try:
        _seed(runtime)
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            table = app.query_one(DataTable)
            await pilot.click(DataTable, offset=row_offset(table, 1))
            assert table.cursor_row == 1 and _detail(app) == ""
            await pilot.click(DataTable, offset=row_offset(table, 1))
            assert "profile fact timezone" in _detail(app)
    finally:
        await runtime.close()


async def test_remembered_text_is_shown_literally_never_as_markup(tmp_path: Path) -> None:
    """Notes are written by the model (and so by whatever injected it): brackets stay text."""
    runtime = await _runtime(tmp_path / "state")
    try:
        runtime.service("memory").note_store().store("[b]bold[/b] [link=https://evil.example]click[/link]")
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("2", "enter")
            assert "[b]bold[/b] [link=https://evil.example]click[/link]" in _detail(app)
    finally:
        await runtime.close()


async def test_g_lists_a_notes_link_neighbourhood_and_enter_opens_a_neighbour(tmp_path: Path) -> None:
    runtime = await _runtime(tmp_path / "state", config={"memoryLinks": {"enabled": True, "expansionDepth": 2}})
    try:
        notes, links = runtime.service("memory").note_store(), runtime.service("memory").link_store()
        a, b, c, d = (notes.store(f"note {name}").note.id for name in "abcd")
        links.add(a, b, "RELATES_TO")
        links.add(b, c, "CAUSED_BY")
        app = PanelHost(panel_of(runtime, "memory"), runtime)
        async with app.run_test(size=(160, 40)) as pilot:
            await pilot.press("2")
            assert [r[0] for r in _cells(app)] == [str(d), str(c), str(b), str(a)]
            await pilot.press("down", "g")  # c: b at one hop, a at two; d is unlinked
            assert [r[0] for r in _cells(app)] == [str(c), str(b), str(a)]
            assert f"notes linked to #{c}" in str(app.query_one("#memory-channels", Static).render())
            await pilot.press("down", "enter")
            assert f"note #{b}" in _detail(app) and f"-> CAUSED_BY #{c}" in _detail(app)
            await pilot.press("g")  # back to every note, the cursor on the newest (d)
            assert len(_cells(app)) == 4
            await pilot.press("g")  # d has no links
            assert any(f"Note #{d} has no links" in m for m in app.messages()), app.notices
    finally:
        await runtime.close()
