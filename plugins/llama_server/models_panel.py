"""The TUI's Models panel: the managed llama-server (status, start/stop) and the local models
(list, use, pull with a progress bar).

Keys: s starts or stops the server, Enter (or u) makes the selected model the one the
server loads (llama.model), g pulls a model by URL, i installs llama-server (built and proven
for this machine, the step shown over a progress bar), r reloads. Mouse: the first click on a
row selects it, a second click on the selected row does what Enter does (the same binding).
Quitting the TUI stops a running install or pull at its next progress report, quietly (the
pull's next run resumes from its kept .part file).
Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label, ProgressBar, Static

from .llama_errors import LlamaServerError
from .models_panel_orchestrator import ModelsPanelOrchestrator

STATUS_EVERY_S = 5.0


def job_cancelled() -> bool:
    """Whether the job running now was cancelled. The app cancels its jobs only as it quits,
    when the panel's widgets may be gone already, so a cancelled job neither updates them nor
    starts a status probe (a query for a widget that is gone fails the job, and the quit would
    report that failure)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class PullScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="models-pull"):
            yield Label("URL of a .gguf file (resumable; checked to be a GGUF). Enter pulls, Esc cancels.",
                        markup=False)
            yield Input(id="models-pull-url", placeholder="https://huggingface.co/.../model.Q4_K_M.gguf")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ModelsPanel(Widget):
    BINDINGS = [Binding("s", "toggle_server", "Start/stop server"), Binding("u", "use", "Use model"),
                Binding("g", "pull", "Pull model"), Binding("i", "install", "Install llama-server"),
                Binding("r", "reload", "Reload")]
    DEFAULT_CSS = ("ModelsPanel { height: 1fr; } ModelsPanel #models-list { height: 1fr; } "
                   "ModelsPanel #models-server { height: auto; } ModelsPanel #models-progress { display: none; } "
                   "ModelsPanel #models-progress.working { display: block; } "
                   "ModelsPanel #models-step { height: auto; display: none; } "
                   "ModelsPanel #models-step.working { display: block; }")

    def __init__(self, context: Any) -> None:
        super().__init__(id="models-panel")
        self.context = context
        self.orchestrator = ModelsPanelOrchestrator(context.runtime)
        self.busy = False  # one start/stop at a time
        self.pulling = False  # one pull at a time
        self.installing = False  # one llama-server build at a time

    def compose(self) -> ComposeResult:
        yield Static("checking llama-server…", id="models-server", markup=False)
        table = self.context.rows(id="models-list")
        table.add_columns("", "model", "source", "on disk", "size")
        yield table
        yield Static("", id="models-step", markup=False)
        yield ProgressBar(id="models-progress", show_eta=True)
        yield Static("", id="models-detail", markup=False)

    def on_mount(self) -> None:
        self.action_reload()
        self.set_interval(STATUS_EVERY_S, self.refresh_status)

    # -- the server ------------------------------------------------------------------------
    def refresh_status(self) -> None:
        async def probe() -> None:
            try:
                lines = await self.orchestrator.status_lines()
            except (LlamaServerError, OSError) as exc:
                lines = [f"llama-server status unavailable: {exc}"]
            self.query_one("#models-server", Static).update("\n".join(lines))

        self.run_worker(probe(), group="models-status", exclusive=True)

    def action_toggle_server(self) -> None:
        if self.busy:
            return
        if self.orchestrator.external():
            self.context.notify("llama.url points at an external server; it is not started or stopped here.",
                                severity="warning")
            return
        stopping = self.orchestrator.running()

        async def job() -> None:
            try:
                said = await (self.orchestrator.stop() if stopping else self.orchestrator.start())
            except (LlamaServerError, OSError) as exc:
                self.context.notify(f"Cannot {'stop' if stopping else 'start'} llama-server: {exc}",
                                    severity="error")
                return
            finally:
                self.busy = False
                self.refresh_status()
            self.context.notify(said)

        self.busy = True
        self.context.run_job("Stopping llama-server" if stopping else "Starting llama-server", job)

    # -- local models ----------------------------------------------------------------------
    def selected(self) -> str | None:
        table = self.query_one("#models-list", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def action_reload(self) -> None:
        self.refresh_status()
        table = self.query_one("#models-list", DataTable)
        keep = self.selected()
        try:
            rows = self.orchestrator.models()
        except LlamaServerError as exc:
            self.context.notify(f"Cannot list the local models: {exc}", severity="error")
            return
        table.clear()
        for row in rows:
            cells = ("*" if row.current else "", row.id, row.source, "yes" if row.present else "missing", row.size)
            table.add_row(*(Text(c) for c in cells), key=row.id)
        ids = [r.id for r in rows]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_use()

    def action_use(self) -> None:
        model_id = self.selected()
        if model_id is None:
            self.context.notify("No model is selected; pull one with g.", severity="warning")
            return
        try:
            row = self.orchestrator.use(model_id)
        except LlamaServerError as exc:
            self.context.notify(f"Cannot use {model_id}: {exc}", severity="error")
            return
        self.query_one("#models-detail", Static).update(f"{row.id}: {row.path}")
        restart = " Restart the server (s twice) to load it." if self.orchestrator.running() else ""
        self.context.notify(f"llama.model = {row.id}.{restart}")
        self.action_reload()

    def action_install(self) -> None:
        """Build and prove llama-server for this machine (minutes on 2 cores): the step shows
        above a progress bar that counts the compile's steps."""
        if self.installing:
            self.context.notify("llama-server is already being installed.", severity="warning")
            return
        if self.pulling:
            self.context.notify("A pull is running; install when it is done.", severity="warning")
            return
        bar, said = self.query_one(ProgressBar), self.query_one("#models-step", Static)
        bar.update(total=None, progress=0)
        said.update("starting the install…")
        bar.add_class("working")
        said.add_class("working")

        def show(step: str, counted: tuple[int, int] | None) -> None:
            said.update(step)
            if counted is not None:
                bar.update(total=counted[1], progress=counted[0])
            else:
                bar.update(total=None)  # a step with no count: the bar pulses

        def progress(step: str, counted: tuple[int, int] | None) -> None:  # called from the build thread
            self.app.call_from_thread(show, step, counted)

        async def job() -> None:
            try:
                said_done = await self.orchestrator.install(progress)
            except (LlamaServerError, OSError) as exc:
                self.context.notify(f"llama-server was not installed: {exc}", severity="error")
                return
            finally:
                self.installing = False
                if not job_cancelled():
                    bar.remove_class("working")
                    said.remove_class("working")
                    self.refresh_status()
            self.context.notify(f"{said_done}. Press s to start it.")

        self.installing = True
        self.context.run_job("Installing llama-server", job)

    def action_pull(self) -> None:
        if self.installing:
            self.context.notify("llama-server is being installed; pull when it is done.", severity="warning")
            return
        if self.pulling:
            self.context.notify("A pull is already running.", severity="warning")
            return
        self.app.push_screen(PullScreen(), self._pull_url)

    def _pull_url(self, url: str | None) -> None:
        if url is None:
            return
        try:
            url = self.orchestrator.check_pull_url(url)
        except LlamaServerError as exc:
            self.context.notify(f"Cannot pull: {exc}", severity="error")
            return
        bar = self.query_one(ProgressBar)
        bar.update(total=None, progress=0)
        bar.add_class("working")

        def progress(done: int, total: int | None) -> None:  # called from the download thread
            self.app.call_from_thread(bar.update, total=total, progress=done)

        async def job() -> None:
            try:
                row, already = await self.orchestrator.pull(url, progress)
            except (LlamaServerError, OSError) as exc:
                self.context.notify(f"Pull failed: {exc}", severity="error")
                return
            finally:
                self.pulling = False
                if not job_cancelled():
                    bar.remove_class("working")
                    self.action_reload()
            self.context.notify(f"{row.id}: {'already downloaded' if already else 'downloaded'} ({row.size}); "
                                "Enter on it makes it the server's model.")

        self.pulling = True
        self.context.run_job(f"Pulling {url.rsplit('/', 1)[-1]}", job)


def build_models_panel(context: Any) -> Widget:
    return ModelsPanel(context)
