"""The tasks plugin's tables in the fleet's PostgreSQL (the `shared_database` service): the
same tables and indexes as tasks.sqlite at its newest version, as steps named `tasks.mNNN_...`
that the shared migration runner applies once (a database a newer build migrated is refused).
Never rename or reorder a step; add a new one.

Integers stay BIGINT epoch milliseconds as in SQLite (the store's SQL is shared); run and
delivery ids come from identity columns, so an id is never reused."""

from __future__ import annotations

SCHEMA_OWNER = "tasks"

_M001 = (
    """CREATE TABLE IF NOT EXISTS tasks (
      id TEXT PRIMARY KEY, message TEXT NOT NULL, status TEXT NOT NULL, origin TEXT NOT NULL,
      wake_source TEXT NOT NULL, session_id TEXT, session_mode TEXT NOT NULL, schedule TEXT, due_at BIGINT,
      occurrence_at BIGINT, attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL, last_error TEXT,
      last_error_category TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL, started_at BIGINT,
      completed_at BIGINT, owner TEXT, attempt_key TEXT, turn_id TEXT, cancel_requested INTEGER NOT NULL DEFAULT 0,
      notify TEXT, created_by_session TEXT, working_dir TEXT)""",
    # the scheduler reads due pending rows only (partial), then locks each with SKIP LOCKED
    "CREATE INDEX IF NOT EXISTS idx_tasks_due ON tasks (due_at) WHERE status = 'pending'",
    "CREATE INDEX IF NOT EXISTS idx_tasks_session ON tasks (session_id, status)",
    "CREATE INDEX IF NOT EXISTS idx_tasks_running ON tasks (owner) WHERE status = 'running'",
    """CREATE TABLE IF NOT EXISTS task_runs (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, task_id TEXT NOT NULL, occurrence_at BIGINT NOT NULL,
      attempt INTEGER NOT NULL, status TEXT NOT NULL, started_at BIGINT, ended_at BIGINT, turn_id TEXT,
      error TEXT, category TEXT, skipped_count INTEGER NOT NULL DEFAULT 0, reason TEXT, reply TEXT,
      tool_calls TEXT)""",
    # one row per attempt at an occurrence, fleet-wide: the database refuses a second claim
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_task_runs_claim ON task_runs (task_id, occurrence_at, attempt) "
    "WHERE status != 'skipped'",
    "CREATE INDEX IF NOT EXISTS idx_task_runs_task ON task_runs (task_id, id)",
    """CREATE TABLE IF NOT EXISTS task_sessions (
      session_id TEXT PRIMARY KEY, task_id TEXT NOT NULL, role TEXT NOT NULL, wake_source TEXT,
      wake_task_id TEXT, wake_at BIGINT, wake_detail TEXT)""",
    "CREATE TABLE IF NOT EXISTS named_sessions (name TEXT PRIMARY KEY, session_id TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS task_deliveries (
      id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, task_id TEXT NOT NULL, occurrence_at BIGINT NOT NULL,
      attempt INTEGER NOT NULL, target TEXT NOT NULL, status TEXT NOT NULL, text TEXT NOT NULL, error TEXT,
      owner TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)""",
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_deliveries_once ON task_deliveries (task_id, occurrence_at, attempt, "
    "target)",
    "CREATE INDEX IF NOT EXISTS idx_deliveries_open ON task_deliveries (status) "
    "WHERE status IN ('pending', 'attempting')",
    # the fleet's runners (each also holds its lease while it lives): what `status` counts
    "CREATE TABLE IF NOT EXISTS task_runners (owner TEXT PRIMARY KEY, started_at TIMESTAMPTZ NOT NULL DEFAULT now())",
)

STEPS: list[tuple[str, tuple[str, ...]]] = [(f"{SCHEMA_OWNER}.m001_tasks", _M001)]
