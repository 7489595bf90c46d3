"""TaskStore: every read and write of the tasks (their run history, their sessions), in
tasks.sqlite (TaskDatabase) or the fleet's PostgreSQL (the shared database's QmarkEngine,
pg_task_database): one SQL text for both; the engine gives what differs (its name, row locks).

Transitions are conditional updates inside write transactions (BEGIN IMMEDIATE on SQLite,
row locks on PostgreSQL), so runtimes sharing the tasks agree on who owns a row: `claim`
takes a due pending row (`FOR UPDATE SKIP LOCKED` on PostgreSQL: several schedulers never
wait on, nor both take, one row) and inserts the run row of its occurrence in one commit,
and only then may a turn start.
"""

from __future__ import annotations

import builtins  # these classes have a `list` method: their annotations name the builtin as builtins.list
import json
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .occurrence_plan import ClaimPlan, SkippedBlock
from .task_database import TaskDatabase

if TYPE_CHECKING:
    from atomic_agent.plugins.postgresql.postgresql_contract import QmarkEngine
from .task_errors import TaskNotFoundError, TaskStateError
from .task_records import (
    PAUSED,
    PENDING,
    RUN_RUNNING,
    RUN_SKIPPED,
    RUNNING,
    STATUSES,
    TERMINAL,
    TaskRecord,
    TaskRun,
)

LIST_CAP = 1000
# due rows through the partial index: SQLite's planner is told to (INDEXED BY), PostgreSQL's finds it
DUE_SQL = "SELECT id FROM tasks{hint} WHERE status = 'pending' AND due_at <= ? ORDER BY due_at LIMIT ?"


def _task(row: dict[str, Any]) -> TaskRecord:
    return TaskRecord(
        id=row["id"], message=row["message"], status=row["status"], origin=row["origin"],
        wake_source=row["wake_source"], session_id=row["session_id"], session_mode=row["session_mode"],
        schedule=json.loads(row["schedule"]) if row["schedule"] else None, due_at=row["due_at"],
        occurrence_at=row["occurrence_at"], attempts=row["attempts"], max_attempts=row["max_attempts"],
        last_error=row["last_error"], last_error_category=row["last_error_category"], created_at=row["created_at"],
        updated_at=row["updated_at"], started_at=row["started_at"], completed_at=row["completed_at"],
        owner=row["owner"], attempt_key=row["attempt_key"], turn_id=row["turn_id"],
        cancel_requested=bool(row["cancel_requested"]), notify=row["notify"],
        created_by_session=row["created_by_session"], working_dir=row["working_dir"])


def _run(row: dict[str, Any]) -> TaskRun:
    return TaskRun(id=row["id"], task_id=row["task_id"], occurrence_at=row["occurrence_at"], attempt=row["attempt"],
                   status=row["status"], started_at=row["started_at"], ended_at=row["ended_at"],
                   turn_id=row["turn_id"], error=row["error"], category=row["category"],
                   skipped_count=row["skipped_count"], reason=row["reason"], reply=row.get("reply"),
                   tool_calls=json.loads(row["tool_calls"]) if row.get("tool_calls") else None)


class TaskStore:
    def __init__(self, database: TaskDatabase | QmarkEngine) -> None:
        self.database = database

    # -- reads --------------------------------------------------------------------------
    def get(self, task_id: str, *, lock: bool = False) -> TaskRecord:
        """The task; `lock` (inside a write) keeps its row ours until the commit."""
        rows = self.database.query("SELECT * FROM tasks WHERE id = ?" + (self.database.lock_row if lock else ""),
                                   [task_id])
        if not rows:
            raise TaskNotFoundError(f"no task {task_id!r}")
        return _task(rows[0])

    def list(self, *, statuses: Sequence[str] = (), session_id: str | None = None,
             limit: int = 100) -> list[TaskRecord]:
        where, params = [], []  # type: ignore[var-annotated]
        if statuses:
            where.append(f"status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        if session_id is not None:
            where.append("(session_id = ? OR created_by_session = ?)")
            params.extend([session_id, session_id])
        sql = "SELECT * FROM tasks" + (f" WHERE {' AND '.join(where)}" if where else "")
        sql += " ORDER BY created_at, id LIMIT ?"
        return [_task(r) for r in self.database.query(sql, [*params, min(max(limit, 1), LIST_CAP)])]

    def database_clock_ms(self) -> int:
        """The fleet database's clock, epoch ms (PostgreSQL only: a file has no clock of its own)."""
        rows = self.database.query("SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) AS now_ms")
        return int(rows[0]["now_ms"])

    def due_ids(self, now: int, limit: int) -> builtins.list[str]:
        """Due pending rows, earliest first — read through the partial index only."""
        hint = " INDEXED BY idx_tasks_due" if self.database.engine == "sqlite" else ""
        return [r["id"] for r in self.database.query(DUE_SQL.format(hint=hint), [now, limit])]

    def running(self) -> builtins.list[TaskRecord]:
        return [_task(r) for r in self.database.query("SELECT * FROM tasks WHERE status = 'running' ORDER BY id")]

    def count_active_for_session(self, session_id: str) -> int:
        return int(self.database.query(
            "SELECT count(*) AS n FROM tasks WHERE status IN ('pending', 'running') "
            "AND (created_by_session = ? OR session_id = ?)", [session_id, session_id])[0]["n"])

    def cancel_requested(self, task_id: str) -> bool:
        rows = self.database.query("SELECT cancel_requested FROM tasks WHERE id = ?", [task_id])
        return bool(rows and rows[0]["cancel_requested"])

    def runs(self, task_id: str, limit: int = 200) -> builtins.list[TaskRun]:
        return [_run(r) for r in self.database.query(
            "SELECT * FROM task_runs WHERE task_id = ? ORDER BY id DESC LIMIT ?", [task_id, limit])][::-1]

    def counts(self) -> dict[str, int]:
        found = {r["status"]: r["n"] for r in self.database.query(
            "SELECT status, count(*) AS n FROM tasks GROUP BY status")}
        return {status: int(found.get(status, 0)) for status in STATUSES}

    def session_role(self, session_id: str) -> dict[str, Any] | None:
        rows = self.database.query("SELECT * FROM task_sessions WHERE session_id = ?", [session_id])
        return rows[0] if rows else None

    # -- writes -------------------------------------------------------------------------
    def create(self, *, message: str, origin: str, wake_source: str, session_id: str | None, session_mode: str,
               schedule: dict[str, Any] | None, due_at: int, max_attempts: int, now: int,
               notify: str | None = None, created_by_session: str | None = None,
               working_dir: str | None = None, task_id: str | None = None) -> TaskRecord:
        task_id = task_id or uuid.uuid4().hex[:16]
        with self.database.write() as conn:
            conn.execute(
                "INSERT INTO tasks (id, message, status, origin, wake_source, session_id, session_mode, schedule, "
                "due_at, occurrence_at, attempts, max_attempts, created_at, updated_at, notify, created_by_session, "
                "working_dir) VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)",
                [task_id, message, origin, wake_source, session_id, session_mode,
                 json.dumps(schedule, sort_keys=True) if schedule is not None else None, due_at, due_at,
                 max_attempts, now, now, notify, created_by_session, working_dir])
            if session_id is not None and session_mode == "recurring":
                self._note_session(conn, session_id, task_id, "recurring")
        return self.get(task_id)

    def claim(self, task_id: str, now: int, owner: str, plan: Callable[[TaskRecord], ClaimPlan]
              ) -> tuple[TaskRecord | None, ClaimPlan | None]:
        """Take a due pending row for `owner`: record what the plan skips, and either rearm the
        row (nothing to run) or mark it running and insert the run row of its occurrence — in
        one transaction. (None, None) when the row is not due and pending any more."""
        with self.database.write() as conn:
            rows = self.database.query("SELECT * FROM tasks WHERE id = ? AND status = 'pending' AND due_at <= ?"
                                       + self.database.skip_locked, [task_id, now])
            if not rows:
                return None, None
            task = _task(rows[0])
            decided = plan(task)
            self._record_skipped(conn, task_id, decided.skipped, now)
            if decided.run_occurrence is None:
                if decided.rearm_due is None:
                    conn.execute("UPDATE tasks SET status = 'completed', completed_at = ?, updated_at = ?, "
                                 "due_at = NULL WHERE id = ?", [now, now, task_id])
                else:
                    conn.execute("UPDATE tasks SET due_at = ?, occurrence_at = ?, updated_at = ? WHERE id = ?",
                                 [decided.rearm_due, decided.rearm_due, now, task_id])
                return None, decided
            attempt = task.attempts + 1
            key = f"task:{task_id}:{decided.run_occurrence}:{attempt}"
            conn.execute("UPDATE tasks SET status = 'running', attempts = ?, occurrence_at = ?, started_at = ?, "
                         "updated_at = ?, owner = ?, attempt_key = ?, turn_id = NULL WHERE id = ?",
                         [attempt, decided.run_occurrence, now, now, owner, key, task_id])
            conn.execute("INSERT INTO task_runs (task_id, occurrence_at, attempt, status, started_at) "
                         "VALUES (?, ?, ?, ?, ?)", [task_id, decided.run_occurrence, attempt, RUN_RUNNING, now])
        return self.get(task_id), decided

    def set_session(self, task_id: str, session_id: str, role: str | None) -> None:
        """Write the session a run uses back to the row (a lazily made one, or a recreated one)."""
        with self.database.write() as conn:
            conn.execute("UPDATE tasks SET session_id = ? WHERE id = ?", [session_id, task_id])
            if role is not None:
                self._note_session(conn, session_id, task_id, role)

    def stamp_wake(self, session_id: str, task_id: str, source: str, at: int, detail: str | None = None) -> None:
        with self.database.write() as conn:
            conn.execute("INSERT INTO task_sessions (session_id, task_id, role) VALUES (?, ?, 'given') "
                         "ON CONFLICT(session_id) DO NOTHING", [session_id, task_id])
            conn.execute("UPDATE task_sessions SET wake_source = ?, wake_task_id = ?, wake_at = ?, wake_detail = ? "
                         "WHERE session_id = ?", [source, task_id, at, detail, session_id])

    def record_turn(self, task: TaskRecord, turn_id: str) -> None:
        with self.database.write() as conn:
            conn.execute("UPDATE tasks SET turn_id = ? WHERE id = ? AND attempt_key = ?", [turn_id, task.id,
                                                                                       task.attempt_key])
            conn.execute("UPDATE task_runs SET turn_id = ? WHERE task_id = ? AND occurrence_at = ? AND attempt = ? "
                         "AND status != 'skipped'", [turn_id, task.id, task.occurrence_at, task.attempts])

    def finish(self, task: TaskRecord, *, run_status: str, now: int, turn_id: str | None = None,
               error: str | None = None, category: str | None = None, next_status: str,
               next_due: int | None = None, next_occurrence: int | None = None, reset_attempts: bool = False,
               reason: str | None = None, skipped: Sequence[SkippedBlock] = (), reply: str | None = None,
               tool_calls: Sequence[dict[str, Any]] | None = None) -> TaskRecord | None:
        """End the attempt `task` (as claimed) stands for: close its run row and move the task
        on. Conditional on the claim (same attempt key, still running), so a stale writer
        changes nothing and gets None."""
        with self.database.write() as conn:
            moved = conn.execute(
                "UPDATE tasks SET status = ?, updated_at = ?, last_error = ?, last_error_category = ?, "
                "completed_at = CASE WHEN ? IN ('completed', 'failed', 'blocked', 'cancelled') THEN ? ELSE NULL END, "
                "due_at = ?, occurrence_at = COALESCE(?, occurrence_at), owner = NULL, "
                "attempts = CASE WHEN ? = 1 THEN 0 ELSE attempts END, turn_id = COALESCE(?, turn_id), "
                "cancel_requested = CASE WHEN ? = 'pending' THEN cancel_requested ELSE 0 END "
                "WHERE id = ? AND status = 'running' AND attempt_key = ?",
                [next_status, now, error, category, next_status, now, next_due, next_occurrence,
                 1 if reset_attempts else 0, turn_id, next_status, task.id, task.attempt_key]).rowcount
            if not moved:
                return None
            conn.execute("UPDATE task_runs SET status = ?, ended_at = ?, turn_id = COALESCE(?, turn_id), error = ?, "
                         "category = ?, reason = ?, reply = ?, tool_calls = ? WHERE task_id = ? AND occurrence_at = ? "
                         "AND attempt = ? AND status = 'running'",
                         [run_status, now, turn_id, error, category, reason, reply,
                          json.dumps(list(tool_calls)) if tool_calls is not None else None, task.id,
                          task.occurrence_at, task.attempts])
            self._record_skipped(conn, task.id, skipped, now)
        return self.get(task.id)

    def release_unstarted(self, task: TaskRecord, now: int, reason: str) -> TaskRecord | None:
        """Give a claimed attempt back untouched (no turn was admitted): pending again, the
        attempt not counted, its run row removed."""
        with self.database.write() as conn:
            moved = conn.execute(
                "UPDATE tasks SET status = 'pending', attempts = attempts - 1, owner = NULL, updated_at = ?, "
                "due_at = COALESCE(due_at, ?), last_error = ? WHERE id = ? AND status = 'running' "
                "AND attempt_key = ?", [now, now, reason, task.id, task.attempt_key]).rowcount
            if not moved:
                return None
            conn.execute("DELETE FROM task_runs WHERE task_id = ? AND occurrence_at = ? AND attempt = ? "
                         "AND status = 'running'", [task.id, task.occurrence_at, task.attempts])
        return self.get(task.id)

    def named_session(self, name: str) -> str | None:
        rows = self.database.query("SELECT session_id FROM named_sessions WHERE name = ?", [name])
        return rows[0]["session_id"] if rows else None

    def set_named_session(self, name: str, session_id: str) -> None:
        with self.database.write() as conn:
            conn.execute("INSERT INTO named_sessions (name, session_id) VALUES (?, ?) ON CONFLICT(name) DO UPDATE "
                         "SET session_id = excluded.session_id", [name, session_id])

    def cancel(self, task_id: str, now: int) -> TaskRecord:
        """Idempotent: a terminal row comes back unchanged; a pending row is cancelled; a
        running row is asked to stop (its runner ends the turn and records the outcome)."""
        with self.database.write() as conn:
            task = self.get(task_id, lock=True)
            if task.status in TERMINAL:
                return task
            if task.status in (PENDING, PAUSED):
                conn.execute("UPDATE tasks SET status = 'cancelled', completed_at = ?, updated_at = ?, due_at = NULL "
                             "WHERE id = ? AND status IN ('pending', 'paused')", [now, now, task_id])
            elif task.status == RUNNING:
                conn.execute("UPDATE tasks SET cancel_requested = 1, updated_at = ? WHERE id = ?", [now, task_id])
        return self.get(task_id)

    def set_paused(self, task_id: str, paused: bool, now: int) -> TaskRecord:
        """pending -> paused, or paused -> pending; already there comes back unchanged. A
        resumed task keeps its due time: an occurrence missed while paused is handled as after
        downtime (a recurring task catches up within the grace window, a one-shot runs)."""
        want, other = (PAUSED, PENDING) if paused else (PENDING, PAUSED)
        with self.database.write() as conn:
            task = self.get(task_id, lock=True)
            if task.status == want:
                return task
            if task.status != other:
                verb = "pause" if paused else "resume"
                hint = ("it is running; pause it once this run ends, or cancel it" if task.status == RUNNING
                        else "only a pending task can be paused" if paused else "only a paused task can be resumed")
                raise TaskStateError(f"cannot {verb} task {task_id}: it is {task.status}; {hint}")
            conn.execute("UPDATE tasks SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
                         [want, now, task_id, other])
        return self.get(task_id)

    def edit(self, task_id: str, now: int, *, message: str | None = None, schedule: dict[str, Any] | None = None,
             due_at: int | None = None, session_id: str | None = None, session_mode: str | None = None) -> TaskRecord:
        """Change a pending or paused task's message and/or schedule. A new schedule starts
        afresh: due at its next occurrence, attempts and the last error cleared."""
        with self.database.write() as conn:
            task = self.get(task_id, lock=True)
            if task.status not in (PENDING, PAUSED):
                hint = ("wait for this run to end, or cancel it" if task.status == RUNNING
                        else "create a new task instead")
                raise TaskStateError(f"cannot edit task {task_id}: it is {task.status}; {hint}")
            sets: list[str] = ["updated_at = ?"]
            params: list[Any] = [now]
            if message is not None:
                sets.append("message = ?")
                params.append(message)
            if schedule is not None:
                sets += ["schedule = ?", "due_at = ?", "occurrence_at = ?", "attempts = 0", "last_error = NULL",
                         "last_error_category = NULL"]
                params += [json.dumps(schedule, sort_keys=True), due_at, due_at]
            if session_id is not None:
                sets += ["session_id = ?", "session_mode = ?"]
                params += [session_id, session_mode]
                if session_mode == "recurring":
                    self._note_session(conn, session_id, task_id, "recurring")
            conn.execute(f"UPDATE tasks SET {', '.join(sets)} WHERE id = ? AND status IN ('pending', 'paused')",
                         [*params, task_id])
        return self.get(task_id)

    def delete(self, task_id: str) -> TaskRecord:
        """Remove a task with its run history and reports; a running task is refused."""
        with self.database.write() as conn:
            task = self.get(task_id, lock=True)
            if task.status == RUNNING:
                raise TaskStateError(f"cannot delete task {task_id}: it is running; cancel it "
                                     f"(`atomic-agent task cancel {task_id}`) and delete it once the run ended")
            for table in ("task_runs", "task_deliveries", "task_sessions"):
                conn.execute(f"DELETE FROM {table} WHERE task_id = ?", [task_id])
            conn.execute("DELETE FROM tasks WHERE id = ? AND status != 'running'", [task_id])
        return task

    def _record_skipped(self, conn: Any, task_id: str, skipped: Sequence[SkippedBlock], now: int) -> None:
        for block in skipped:
            conn.execute("INSERT INTO task_runs (task_id, occurrence_at, attempt, status, ended_at, skipped_count, "
                         "reason) VALUES (?, ?, 0, ?, ?, ?, ?)",
                         [task_id, block.first_at, RUN_SKIPPED, now, block.count, block.reason])

    def _note_session(self, conn: Any, session_id: str, task_id: str, role: str) -> None:
        conn.execute("INSERT INTO task_sessions (session_id, task_id, role) VALUES (?, ?, ?) "
                     "ON CONFLICT(session_id) DO UPDATE SET task_id = excluded.task_id, role = excluded.role",
                     [session_id, task_id, role])

