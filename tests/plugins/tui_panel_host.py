"""A minimal host for one plugin-contributed TUI panel, for the panels' tests.

The real `atomic-agent tui` app is written separately; the panels only depend on the
TuiPanel / TuiContext contract, so this host implements that contract and nothing more: it
mounts one panel's widget, records every notice, runs jobs as tasks on the app's loop
(a failed job becomes an error notice, as the contract says) and hands out the app's rows
widget. Tests drive it with Textual's
pilot and wait for the jobs with `settle()`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from textual.app import App, ComposeResult

from atomic_agent.api import TUI_PANEL_SERVICE, TuiPanel


@attrs.define
class Notice:
    message: str
    severity: str


class HostContext:
    """The TuiContext the host hands to `build`."""

    def __init__(self, app: PanelHost, runtime: Any) -> None:
        self.app = app
        self.runtime = runtime

    def notify(self, message: str, *, severity: str = "information") -> None:
        self.app.notices.append(Notice(message, severity))

    def run_job(self, title: str, job: Callable[[], Awaitable[Any]]) -> None:
        self.app.job_titles.append(title)

        async def run() -> None:
            try:
                await job()
            except Exception as exc:  # the contract: a failing job is a notice, never a crash of the UI
                self.notify(f"{title} failed: {exc}", severity="error")

        task = asyncio.get_running_loop().create_task(run())
        self.app.jobs.add(task)
        task.add_done_callback(self.app.jobs.discard)

    def rows(self, *, id: str | None = None) -> Any:
        from atomic_agent.plugins.tui.mouse_interaction import RowList  # the app's own, so panels are tested with it

        return RowList(id=id)


class PanelHost(App[None]):
    """Mounts `panel.build(context)` full screen."""

    def __init__(self, panel: TuiPanel, runtime: Any) -> None:
        super().__init__()
        self.panel = panel
        self.context = HostContext(self, runtime)
        self.notices: list[Notice] = []
        self.job_titles: list[str] = []
        self.jobs: set[asyncio.Task[None]] = set()
        self.widget: Any = None

    def compose(self) -> ComposeResult:
        self.widget = self.panel.build(self.context)
        yield self.widget

    async def settle(self, pilot: Any, timeout_s: float = 30.0) -> None:
        """Wait until every job started so far (and any job they started) has finished."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while self.jobs:
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"jobs still running after {timeout_s} s: {self.job_titles}")
            await asyncio.wait(set(self.jobs), timeout=0.2)
        await pilot.pause()

    def messages(self, severity: str | None = None) -> list[str]:
        return [n.message for n in self.notices if severity is None or n.severity == severity]


def panel_of(runtime: Any, name: str) -> TuiPanel:
    """The panel called `name` among those the runtime's plugins contribute."""
    panels = [p for p in runtime.services(TUI_PANEL_SERVICE) if isinstance(p, TuiPanel)]
    found = [p for p in panels if p.name == name]
    assert found, f"no TUI panel {name!r}; the plugins offer {[p.name for p in panels]}"
    return found[0]


def row_offset(table: Any, row: int) -> tuple[int, int]:
    """Where to click in a DataTable (relative to it) to hit `row` (the header is one line)."""
    return (2, row + (1 if table.show_header else 0))
