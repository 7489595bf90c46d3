"""A task, one run of it, and the vocabulary of both (statuses, origins, wake sources)."""

from __future__ import annotations

from typing import Any

import attrs

PENDING, RUNNING, COMPLETED, FAILED, BLOCKED, CANCELLED, PAUSED = (
    "pending", "running", "completed", "failed", "blocked", "cancelled", "paused")
# paused: kept with its schedule but never picked (the due index holds pending rows only)
STATUSES = (PENDING, RUNNING, COMPLETED, FAILED, BLOCKED, CANCELLED, PAUSED)
TERMINAL = (COMPLETED, FAILED, BLOCKED, CANCELLED)
ACTIVE = (PENDING, RUNNING)

ORIGINS = ("cli", "tui", "http", "sidecar", "scheduler", "agent", "webhook")
WAKE_SOURCES = ("user", "scheduler", "webhook", "agent")

# what a run (one attempt at one occurrence) ended as; "skipped" rows stand for occurrences never run
RUN_RUNNING, RUN_RETRY, RUN_INTERRUPTED, RUN_SKIPPED = "running", "retry", "interrupted", "skipped"
RUN_STATUSES = (RUN_RUNNING, COMPLETED, FAILED, BLOCKED, CANCELLED, RUN_RETRY, RUN_INTERRUPTED, RUN_SKIPPED)


@attrs.frozen
class TaskRecord:
    id: str
    message: str
    status: str
    origin: str
    wake_source: str
    session_id: str | None
    session_mode: str  # "given" | "ephemeral" | "recurring"
    schedule: dict[str, Any] | None  # {"kind": "at"|"cron"|"interval", ...} as stored
    due_at: int | None  # epoch ms the row is next picked at (an occurrence, or a retry)
    occurrence_at: int | None  # the occurrence this row stands for (retries keep it)
    attempts: int
    max_attempts: int
    last_error: str | None
    last_error_category: str | None
    created_at: int
    updated_at: int
    started_at: int | None
    completed_at: int | None
    owner: str | None
    attempt_key: str | None
    turn_id: str | None
    cancel_requested: bool
    notify: str | None
    created_by_session: str | None
    working_dir: str | None = None

    @property
    def recurring(self) -> bool:
        return self.schedule is not None and self.schedule.get("kind") in ("cron", "interval")

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "message": self.message, "status": self.status, "origin": self.origin,
                "wakeSource": self.wake_source, "sessionId": self.session_id, "sessionMode": self.session_mode,
                "schedule": self.schedule, "dueAt": self.due_at, "occurrenceAt": self.occurrence_at,
                "attempts": self.attempts, "maxAttempts": self.max_attempts, "lastError": self.last_error,
                "lastErrorCategory": self.last_error_category, "createdAt": self.created_at,
                "updatedAt": self.updated_at, "startedAt": self.started_at, "completedAt": self.completed_at,
                "turnId": self.turn_id, "notify": self.notify}


@attrs.frozen
class TaskRun:
    """One attempt at one occurrence (or a block of occurrences recorded as skipped)."""

    id: int
    task_id: str
    occurrence_at: int
    attempt: int
    status: str
    started_at: int | None
    ended_at: int | None
    turn_id: str | None
    error: str | None
    category: str | None
    skipped_count: int
    reason: str | None
    reply: str | None = None  # the turn's reply (runs recorded before m006 have none)
    tool_calls: list[dict[str, Any]] | None = None  # [{"tool", "status"}] in call order

    def as_json(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "occurrenceAt": self.occurrence_at, "attempt": self.attempt,
                "status": self.status, "startedAt": self.started_at, "endedAt": self.ended_at,
                "turnId": self.turn_id, "error": self.error, "category": self.category,
                "skippedCount": self.skipped_count, "reason": self.reason, "reply": self.reply,
                "toolCalls": self.tool_calls}
