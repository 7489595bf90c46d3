"""`notify`: a task's terminal outcome reported through a channel, as a durable delivery.

The report (plain text, bounded: the result excerpt at most 3000 characters, an error at
most 500, each cut with an explicit marker) is written as a `pending` delivery in the same
breath as the outcome; sending marks it `attempting` first (committed), then `delivered`
or `failed`. A delivery a dead process left `attempting` becomes `uncertain` at the next
start and is never sent again. Reports go to the `report_sink` service (any channel plugin
may provide it, several side by side: `async send_report(target, text)`, each gets every
report); with none, deliveries stay pending and each is logged once. Only terminal
outcomes are reported (completed, failed, blocked; never a retry, never a cancel).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import attrs

from .tasks_contract import REPORT_SINK, ReportSink

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

RESULT_MAX_CHARS = 3000
ERROR_MAX_CHARS = 500
PROMPT_PREVIEW_CHARS = 200
TRUNCATED = " … [truncated]"
REPORTED_STATUSES = ("completed", "failed", "blocked", "interrupted")


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + TRUNCATED


def report_text(task: Any, status: str, result: str | None, error: str | None) -> str:
    lines = [f"Task {task.id} {status}", f"Task: {_cap(task.message, PROMPT_PREVIEW_CHARS)}"]
    if result:
        lines.append(f"Result: {_cap(result, RESULT_MAX_CHARS)}")
    if error:
        lines.append(f"Error: {_cap(error, ERROR_MAX_CHARS)}")
    return "\n".join(lines)


@attrs.frozen
class Delivery:
    id: int
    task_id: str
    target: str
    status: str
    text: str
    error: str | None


class TaskReports:
    def __init__(self, store: Any, runtime: RuntimeView, clock: Any, owner: str, is_alive: Any) -> None:
        self.store = store
        self.runtime = runtime
        self.clock = clock
        self.owner = owner
        self.is_alive = is_alive
        self._warned: set[int] = set()

    def record(self, task: Any, status: str, result: str | None, error: str | None) -> None:
        if not task.notify or status not in REPORTED_STATUSES:
            return
        now = self.clock()
        with self.store.database.write() as conn:
            conn.execute("INSERT INTO task_deliveries (task_id, occurrence_at, attempt, target, status, "
                         "text, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?) ON CONFLICT DO NOTHING",
                         [task.id, task.occurrence_at or 0, task.attempts, task.notify,
                          report_text(task, status, result, error), now, now])

    def deliveries(self, task_id: str) -> list[Delivery]:
        return [Delivery(r["id"], r["task_id"], r["target"], r["status"], r["text"], r["error"]) for r in
                self.store.database.query("SELECT * FROM task_deliveries WHERE task_id = ? ORDER BY id", [task_id])]

    def settle_dead_attempts(self) -> int:
        """Deliveries a dead process left mid-send become `uncertain` (never re-sent)."""
        rows = self.store.database.query("SELECT id, owner FROM task_deliveries WHERE status = 'attempting'")
        dead = [r["id"] for r in rows if r["owner"] != self.owner and not self.is_alive(r["owner"])]
        with self.store.database.write() as conn:
            for delivery_id in dead:
                conn.execute("UPDATE task_deliveries SET status = 'uncertain', updated_at = ?, error = ? WHERE id = ? "
                             "AND status = 'attempting'",
                             [self.clock(), "the process died while sending; not sent again", delivery_id])
        return len(dead)

    async def deliver_pending(self) -> int:
        """Send every pending delivery once; how many were delivered."""
        sinks: list[ReportSink] = self.runtime.services(REPORT_SINK)
        delivered = 0
        for row in self.store.database.query("SELECT * FROM task_deliveries WHERE status = 'pending' ORDER BY id"):
            if not sinks:
                if row["id"] not in self._warned:
                    self._warned.add(row["id"])
                    print(f"atomic-agent: task {row['task_id']}: a {row['target']} report is waiting: no plugin "
                          f"provides the {REPORT_SINK!r} service", file=sys.stderr)
                continue
            with self.store.database.write() as conn:
                claimed = conn.execute("UPDATE task_deliveries SET status = 'attempting', owner = ?, updated_at = ? "
                                       "WHERE id = ? AND status = 'pending'",
                                       [self.owner, self.clock(), row["id"]]).rowcount
            if not claimed:
                continue
            errors = []
            for sink in sinks:  # every sink gets the report; one that fails does not stop the others
                try:
                    await sink.send_report(row["target"], row["text"])
                except Exception as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    print(f"atomic-agent: task {row['task_id']}: the {row['target']} report failed: {errors[-1]}",
                          file=sys.stderr)
            status, error = ("failed", "; ".join(errors)) if errors else ("delivered", None)
            delivered += not errors
            with self.store.database.write() as conn:
                conn.execute("UPDATE task_deliveries SET status = ?, error = ?, updated_at = ? WHERE id = ?",
                             [status, error, self.clock(), row["id"]])
        return delivered
