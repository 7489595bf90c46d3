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
