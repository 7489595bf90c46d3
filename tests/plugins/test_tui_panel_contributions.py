"""The plugins' TUI panels as the coming app will collect them: every panel plugin offers one
TuiPanel through the `tui_panel` service, names are distinct, and offering them loads no
Textual (it is imported inside `build` only, so `run` and `--help` never pay for it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from atomic_agent.api import TUI_PANEL_SERVICE, TuiPanel, runtime_for_test

PANEL_PLUGINS = {"mcp": "mcp", "tasks": "tasks", "memory": "memory", "telegram": "telegram",
                 "llama_server": "models", "openai_compatible": "providers"}


async def test_every_panel_plugin_offers_its_panel_and_textual_stays_unloaded(tmp_path: Path) -> None:
    probe = f"""
import asyncio, importlib, sys
from pathlib import Path
from atomic_agent.api import TUI_PANEL_SERVICE, runtime_for_test

async def main():
    plugins = {{name: importlib.import_module("atomic_agent.plugins." + name) for name in {sorted(PANEL_PLUGINS)!r}}}
    runtime = await runtime_for_test(Path({str(tmp_path / "state")!r}), plugins=plugins, start=False)
    panels = runtime.services(TUI_PANEL_SERVICE)
    print(sorted(p.name for p in panels))
    print(sorted(m for m in sys.modules if m == "textual" or m.startswith("textual.")))
    await runtime.close()

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    names, textual_modules = done.stdout.strip().splitlines()[-2:]
    assert names == repr(sorted(PANEL_PLUGINS.values()))
    assert textual_modules == "[]"


async def test_panels_have_distinct_names_and_orders(tmp_path: Path) -> None:
    import importlib

    plugins = {name: importlib.import_module(f"atomic_agent.plugins.{name}") for name in PANEL_PLUGINS}
    runtime = await runtime_for_test(tmp_path / "state", plugins=plugins, start=False)
    try:
        panels = runtime.services(TUI_PANEL_SERVICE)
        assert all(isinstance(p, TuiPanel) for p in panels)
        assert len({p.name for p in panels}) == len(panels) == len(PANEL_PLUGINS)
        assert len({p.order for p in panels}) == len(panels)  # the tab order is decided, not left to chance
    finally:
        await runtime.close()


def test_no_plugin_panel_defines_its_own_rows_widget() -> None:
    """The click rule lives in one widget (TuiContext.rows); a DataTable subclass in a plugin
    would be a second copy of it that can drift."""
    import ast

    plugins = Path(__file__).resolve().parents[2] / "plugins"
    copies = []
    for path in plugins.rglob("*.py"):
        if path.parent.name == "tui":  # the app itself owns the one widget
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any("DataTable" in ast.unparse(b) for b in node.bases):
                copies.append(f"{path.relative_to(plugins)}:{node.name}")
    assert copies == []


async def test_every_panel_lists_rows_with_the_contexts_widget_and_a_click_anywhere_on_the_row_activates(
        tmp_path: Path) -> None:
    import importlib

    from textual.widgets import DataTable

    from atomic_agent.plugins.tui.mouse_interaction import RowList
    from tests.plugins.tui_panel_host import PanelHost, panel_of

    plugins = {name: importlib.import_module(f"atomic_agent.plugins.{name}") for name in PANEL_PLUGINS}
    runtime = await runtime_for_test(tmp_path / "state", plugins=plugins, start=False)
    try:
        for panel_name in sorted(PANEL_PLUGINS.values()):
            app = PanelHost(panel_of(runtime, panel_name), runtime)
            async with app.run_test(size=(160, 40)) as pilot:
                await pilot.pause()
                tables = list(app.query(DataTable))
                assert all(isinstance(t, RowList) for t in tables), (panel_name, tables)
                if panel_name == "telegram":
                    assert tables == []  # no list: a button for every key
                    continue
                assert tables, panel_name
                table = tables[0]
                table.clear(columns=True)
                table.add_columns("a", "b")
                for key in ("one", "two"):
                    table.add_row(key, key, key=key)
                selected: list[str] = []
                post = table.post_message

                def spy(message: object, post=post, selected=selected) -> bool:
                    if isinstance(message, DataTable.RowSelected):
                        selected.append(str(message.row_key.value))
                    return post(message)  # type: ignore[arg-type]

                table.post_message = spy  # type: ignore[method-assign]
                await pilot.click(table, offset=(2, 2))  # row "two", first column: selects only
                assert table.cursor_row == 1 and selected == []
                await pilot.click(table, offset=(6, 2))  # the same row, another column: activates
                await pilot.pause()
                assert selected == ["two"], panel_name
    finally:
        await runtime.close()
