"""Migrations of tasks.sqlite: functions named m00N_..., never renamed or reordered, each
idempotent; storage.sqlite_migrations applies them and keeps `PRAGMA user_version`, so a
file written by a newer build is refused untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import SqliteStore, sqlite_migrations

if TYPE_CHECKING:  # the steps receive a Database; the module loads without sqlite-utils
    import sqlite_utils

_TASKS_DDL = """
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  message TEXT NOT NULL,
  status TEXT NOT NULL,
  origin TEXT NOT NULL,
  wake_source TEXT NOT NULL,
  session_id TEXT,
  session_mode TEXT NOT NULL,
  schedule TEXT,
  due_at INTEGER,
  occurrence_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  last_error TEXT,
  last_error_category TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  started_at INTEGER,
  completed_at INTEGER,
  owner TEXT,
  attempt_key TEXT,
  turn_id TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  notify TEXT,
  created_by_session TEXT,
  working_dir TEXT
)"""

_RUNS_DDL = """
CREATE TABLE IF NOT EXISTS task_runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_id TEXT NOT NULL,
  occurrence_at INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  status TEXT NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  turn_id TEXT,
  error TEXT,
  category TEXT,
  skipped_count INTEGER NOT NULL DEFAULT 0,
  reason TEXT
)"""


def m001_tasks(db: sqlite_utils.Database) -> None:
    """Tasks, and the one index the scheduler reads: due pending rows only (partial)."""
    with SqliteStore.transaction(db.conn):
        db.execute(_TASKS_DDL)
        db.execute("CREATE INDEX IF NOT EXISTS idx_tasks_due ON tasks(due_at) WHERE status = 'pending'")
        db.execute("CREATE INDEX IF NOT EXISTS idx_tasks_session ON tasks(session_id, status)")
        db.execute("CREATE INDEX IF NOT EXISTS idx_tasks_running ON tasks(owner) WHERE status = 'running'")


def m002_task_runs(db: sqlite_utils.Database) -> None:
    """The run history. One row per attempt at an occurrence: the unique index is the claim
    on an occurrence (a second runtime cannot insert the same attempt)."""
    with SqliteStore.transaction(db.conn):
        db.execute(_RUNS_DDL)
        db.execute("CREATE UNIQUE INDEX IF NOT EXISTS idx_task_runs_claim ON task_runs(task_id, occurrence_at, "
                   "attempt) WHERE status != 'skipped'")
        db.execute("CREATE INDEX IF NOT EXISTS idx_task_runs_task ON task_runs(task_id, id)")


def m003_task_sessions(db: sqlite_utils.Database) -> None:
    """What the runner knows about the sessions it runs in: who made it (an ephemeral
    one-shot session, a recurring task's persistent one) and the last wake reason stamped on
    it before a run (audit only; never rendered into a prompt)."""
    with SqliteStore.transaction(db.conn):
        db.execute("""
            CREATE TABLE IF NOT EXISTS task_sessions (
              session_id TEXT PRIMARY KEY,
              task_id TEXT NOT NULL,
              role TEXT NOT NULL,
              wake_source TEXT,
              wake_task_id TEXT,
              wake_at INTEGER,
              wake_detail TEXT
            )""")


def m004_named_sessions(db: sqlite_utils.Database) -> None:
    """Persistent sessions kept under a name (a webhook endpoint's `webhook:<name>`)."""
    with SqliteStore.transaction(db.conn):
        db.execute("CREATE TABLE IF NOT EXISTS named_sessions (name TEXT PRIMARY KEY, session_id TEXT NOT NULL)")


def m005_deliveries(db: sqlite_utils.Database) -> None:
    """Reports of terminal outcomes (`notify`) as durable deliveries: pending -> attempting ->
    delivered | failed, and attempting -> uncertain when a process died mid-send."""
    with SqliteStore.transaction(db.conn):
        db.execute("""
            CREATE TABLE IF NOT EXISTS task_deliveries (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              task_id TEXT NOT NULL,
              occurrence_at INTEGER NOT NULL,
              attempt INTEGER NOT NULL,
              target TEXT NOT NULL,
              status TEXT NOT NULL,
              text TEXT NOT NULL,
              error TEXT,
              owner TEXT,
              created_at INTEGER NOT NULL,
              updated_at INTEGER NOT NULL
            )""")
        db.execute("CREATE UNIQUE INDEX IF NOT EXISTS idx_deliveries_once ON task_deliveries(task_id, occurrence_at, "
                   "attempt, target)")
        db.execute("CREATE INDEX IF NOT EXISTS idx_deliveries_open ON task_deliveries(status) "
                   "WHERE status IN ('pending', 'attempting')")


MIGRATIONS: list[sqlite_migrations.Migration] = [m001_tasks, m002_task_runs, m003_task_sessions, m004_named_sessions,
                               m005_deliveries]
TASK_SCHEMA_VERSION = len(MIGRATIONS)
