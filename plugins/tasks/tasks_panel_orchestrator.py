"""What the TUI's Tasks panel may do, and the only code of the panel that touches the runtime.

The widget (tasks_panel.py) asks this for rows and details and hands it the operator's
actions: create, cancel and run now, which is what the tasks service supports (there is no
pause: a recurring task is cancelled and created again). Nothing here imports Textual.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs

from .task_errors import TaskValidationError
from .task_records import ACTIVE, STATUSES, TERMINAL, TaskRecord
from .task_schedule import describe

SERVICE = "tasks"
# what `f` cycles through: every task, the live ones, the finished ones, then each status alone
FILTERS: tuple[tuple[str, tuple[str, ...]], ...] = (("all", ()), ("active", ACTIVE), ("finished", TERMINAL),
                                                    *((s, (s,)) for s in STATUSES))
LIST_LIMIT = 500
SCHEDULE_FORMS = "empty (now), `in MINUTES`, `every SECONDS`, `at ISO-TIME` or `cron EXPR [tz=ZONE]`"


@attrs.frozen
class TaskRow:
    id: str
    status: str
    schedule: str
    next_run: str
    attempts: str
    message: str


def when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone().isoformat(timespec="seconds")


class TasksPanelOrchestrator:
    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime

    @property
    def service(self) -> Any:
        return self.runtime.service(SERVICE)

    @property
    def enabled(self) -> bool:
        return bool(self.runtime.config.block(SERVICE).enabled)

    def rows(self, filter_name: str = "all") -> list[TaskRow]:
        statuses = dict(FILTERS)[filter_name]
        tasks = self.service.store.list(statuses=list(statuses), limit=LIST_LIMIT)
        return [TaskRow(t.id, t.status, describe(t.schedule), when(t.due_at) if t.status == "pending" else "-",
                        f"{t.attempts}/{t.max_attempts}", " ".join(t.message.split())[:60]) for t in tasks]

    def task(self, task_id: str) -> TaskRecord:
        return self.service.store.get(task_id)

    def detail(self, task_id: str) -> str:
        task = self.task(task_id)
        lines = [f"task {task.id} — {task.status}", f"schedule: {describe(task.schedule)}",
                 f"next run: {when(task.due_at) if task.status == 'pending' else '-'}",
                 f"attempts: {task.attempts}/{task.max_attempts}",
                 f"session: {task.session_id or '(made when it runs)'} ({task.session_mode})",
                 f"origin: {task.origin}, created {when(task.created_at)}"]
        if task.notify:
            lines.append(f"reports to: {task.notify}")
        if task.last_error:
            lines.append(f"last error ({task.last_error_category or 'error'}): {task.last_error}")
        lines.append(f"message: {task.message}")
        runs = self.service.store.runs(task_id, limit=10)
        if runs:
            lines.append("last runs:")
        for run in runs:
            status = run.status + (f" x{run.skipped_count}" if run.skipped_count > 1 else "")
            note = run.reason or run.error or ""
            lines.append(f"  {when(run.occurrence_at)} attempt {run.attempt}: {status} {note[:80]}".rstrip())
        return "\n".join(lines)

    def create(self, message: str, schedule_text: str) -> TaskRecord:
        """A task from the form's two fields; TaskValidationError names the field to fix."""
        schedule = self.parse_schedule(schedule_text)
        return self.service.create(message, origin="tui", wake_source="user", schedule=schedule,
                                   working_dir=Path.cwd())

    def parse_schedule(self, text: str) -> dict[str, Any] | None:
        words = text.split()
        if not words:
            return None
        kind, rest = words[0].lower(), words[1:]
        if kind == "in" and len(rest) == 1 and rest[0].isdigit() and int(rest[0]) >= 1:
            return {"kind": "at", "at": self.service.clock() + int(rest[0]) * 60_000}
        if kind == "every" and len(rest) == 1 and rest[0].isdigit():
            return {"kind": "interval", "everyMs": int(rest[0]) * 1000}
        if kind == "at" and len(rest) == 1:
            try:
                moment = datetime.fromisoformat(rest[0])
            except ValueError:
                raise TaskValidationError("schedule", f"{rest[0]!r} is not an ISO 8601 time "
                                                      "(e.g. 2026-12-24T18:00)") from None
            if moment.tzinfo is None:
                moment = moment.astimezone()  # the local zone, as a person typing it means
            return {"kind": "at", "at": int(moment.timestamp() * 1000)}
        if kind == "cron" and rest:
            tz = None
            if rest[-1].startswith("tz="):
                tz, rest = rest[-1][3:], rest[:-1]
            return {"kind": "cron", "expression": " ".join(rest), "tz": tz}
        raise TaskValidationError("schedule", f"{text.strip()!r} is not a schedule; use {SCHEDULE_FORMS}")

    def cancel(self, task_id: str) -> TaskRecord:
        return self.service.cancel(task_id)

    async def run_now(self, task_id: str) -> list[tuple[str, str]]:
        """One attempt now, whatever its due time; the (task, outcome) pairs that ran."""
        service = self.service
        report = await service.runner.run_now(task_id)
        await service.reports.deliver_pending()
        return list(report.outcomes)
