"""The TUI's Tasks panel: the task list with a status filter, a task's details and last runs,
and create, cancel and run-now.

Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
Keys on the list: Enter shows the task, n creates one (a form: message and schedule),
c cancels (a recurring task asks y/n first), R runs it now, r reloads, f cycles the status
filter, a switches the 5-second auto-refresh. Mouse: the first click on a row selects it, a
second click on the selected row does what Enter does (the same binding).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, DataTable, Input, Label, Static

from .task_errors import TaskNotFoundError, TaskStoreError, TaskValidationError
from .tasks_panel_orchestrator import FILTERS, SCHEDULE_FORMS, TasksPanelOrchestrator

AUTO_REFRESH_S = 5.0


class CreateTaskScreen(ModalScreen[tuple[str, str] | None]):
    BINDINGS = [Binding("ctrl+s", "submit", "Create"), Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="task-create"):
            yield Label("What should the agent do?", markup=False)
            yield Input(id="task-message", placeholder="message")
            yield Label(f"When: {SCHEDULE_FORMS}", markup=False)
            yield Input(id="task-schedule", placeholder="e.g. every 3600")
            with Horizontal():
                yield Button("Create", id="task-create-submit", variant="primary")
                yield Button("Cancel", id="task-create-cancel")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "task-message":
            self.query_one("#task-schedule", Input).focus()  # Enter advances, as in any form
        else:
            self.action_submit()

    def action_submit(self) -> None:
        self.dismiss((self.query_one("#task-message", Input).value, self.query_one("#task-schedule", Input).value))

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "task-create-submit":
            self.action_submit()
        else:
            self.action_cancel()


class ConfirmCancelScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y,enter", "answer(True)", "Cancel the task"), Binding("n,escape", "answer(False)", "Keep")]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical(id="task-cancel"):
            yield Label(self.text, markup=False)
            with Horizontal():
                yield Button("Cancel it", id="task-cancel-yes", variant="error")
                yield Button("Keep", id="task-cancel-no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "task-cancel-yes")


class TasksPanel(Widget):
    BINDINGS = [Binding("n", "create", "New task"), Binding("c", "cancel_task", "Cancel"),
                Binding("R", "run_now", "Run now"), Binding("r", "reload", "Reload"),
                Binding("f", "cycle_filter", "Filter"), Binding("a", "auto_refresh", "Auto-refresh")]
    DEFAULT_CSS = "TasksPanel { height: 1fr; } TasksPanel #tasks-list { height: 1fr; } TasksPanel #tasks-detail { height: auto; }"

    def __init__(self, context: Any) -> None:
        super().__init__(id="tasks-panel")
        self.context = context
        self.orchestrator = TasksPanelOrchestrator(context.runtime)
        self.filter_index = 0
        self.auto: Any = None  # the auto-refresh timer while it is on

    def compose(self) -> ComposeResult:
        yield Static("", id="tasks-filter", markup=False)
        table = self.context.rows(id="tasks-list")
        table.add_columns("id", "status", "schedule", "next run", "attempts", "message")
        yield table
        yield Static("", id="tasks-detail", markup=False)

    def on_mount(self) -> None:
        self.action_reload()

    @property
    def filter_name(self) -> str:
        return FILTERS[self.filter_index][0]

    def selected(self) -> str | None:
        table = self.query_one("#tasks-list", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def _show(self, text: str) -> None:
        self.query_one("#tasks-detail", Static).update(text)

    def _guarded(self, work: Any) -> Any:
        """Run `work()`; a store or validation problem becomes a notice instead of an exception."""
        try:
            return work()
        except TaskValidationError as exc:
            self.context.notify(f"Invalid {exc.field}: {exc.problem}", severity="error")
        except (TaskNotFoundError, TaskStoreError) as exc:
            self.context.notify(str(exc), severity="error")
        return None

    # -- list ------------------------------------------------------------------------------
    def action_reload(self) -> None:
        table = self.query_one("#tasks-list", DataTable)
        keep = self.selected()
        auto = " · auto-refresh on" if self.auto is not None else ""
        self.query_one("#tasks-filter", Static).update(f"filter: {self.filter_name} (f cycles){auto}")
        rows = self._guarded(lambda: self.orchestrator.rows(self.filter_name))
        if rows is None:
            return
        table.clear()
        for row in rows:
            cells = (row.id, row.status, row.schedule, row.next_run, row.attempts, row.message)
            table.add_row(*(Text(c) for c in cells), key=row.id)  # Text: a task's message is never markup
        ids = [r.id for r in rows]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
        if not self.orchestrator.enabled:
            self._show("Tasks are switched off (tasks.enabled = false): the list is shown, nothing runs.")
        elif not rows:
            self._show("No tasks" + ("" if self.filter_name == "all" else f" with filter {self.filter_name}")
                       + ". Press n to create one.")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        task_id = event.row_key.value
        if task_id is not None:
            text = self._guarded(lambda: self.orchestrator.detail(task_id))
            if text is not None:
                self._show(text)

    def action_cycle_filter(self) -> None:
        self.filter_index = (self.filter_index + 1) % len(FILTERS)
        self.action_reload()

    def action_auto_refresh(self) -> None:
        if self.auto is None:
            self.auto = self.set_interval(AUTO_REFRESH_S, self.action_reload)
        else:
            self.auto.stop()
            self.auto = None
        self.action_reload()

    # -- actions ---------------------------------------------------------------------------
    def action_create(self) -> None:
        self.app.push_screen(CreateTaskScreen(), self._created)

    def _created(self, form: tuple[str, str] | None) -> None:
        if form is None:
            return
        message, schedule = form
        task = self._guarded(lambda: self.orchestrator.create(message, schedule))
        if task is None:
            return
        self.context.notify(f"Task {task.id} created ({task.status}).")
        self.action_reload()

    def action_cancel_task(self) -> None:
        task_id = self.selected()
        if task_id is None:
            self.context.notify("No task is selected.", severity="warning")
            return
        task = self._guarded(lambda: self.orchestrator.task(task_id))
        if task is None:
            return
        if task.status not in ("pending", "running"):
            self.context.notify(f"Task {task_id} is already {task.status}.")
            return
        if task.recurring:
            question = f"Cancel recurring task {task_id}? Every future run stops. (y/n)"
            self.app.push_screen(ConfirmCancelScreen(question), lambda yes: self._cancel(task_id) if yes else None)
        else:
            self._cancel(task_id)

    def _cancel(self, task_id: str) -> None:
        task = self._guarded(lambda: self.orchestrator.cancel(task_id))
        if task is not None:
            self.context.notify(f"Task {task_id} {task.status}.")
            self.action_reload()

    def action_run_now(self) -> None:
        task_id = self.selected()
        if task_id is None:
            self.context.notify("No task is selected.", severity="warning")
            return
        if not self.orchestrator.enabled:
            self.context.notify("Tasks are switched off (tasks.enabled = false); nothing can run.", severity="error")
            return
        task = self._guarded(lambda: self.orchestrator.task(task_id))
        if task is None:
            return
        if task.status != "pending":
            self.context.notify(f"Task {task_id} is {task.status}; only a pending task can run now.",
                                severity="warning")
            return

        async def job() -> None:
            try:
                outcomes = await self.orchestrator.run_now(task_id)
            finally:
                self.action_reload()
            for ran, outcome in outcomes:
                self.context.notify(f"Task {ran}: {outcome}")
            if not outcomes:
                self.context.notify(f"Task {task_id} was not pending any more; nothing ran.", severity="warning")

        self.context.run_job(f"Running task {task_id}", job)


def build_tasks_panel(context: Any) -> Widget:
    return TasksPanel(context)
