"""`atomic-agent doctor`: is tasks.sqlite usable, and is anything stuck? Read-only. Tasks
kept in the fleet's PostgreSQL: the postgresql plugin's storage check tries the connection;
`status` reads the tasks there."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import DoctorFinding


def task_findings(state_dir: Path) -> list[DoctorFinding]:
    from atomic_agent.api import DoctorFinding, open_sqlite_read_only, sqlite_migrations

    from .task_database import tasks_db_path
    from .task_schema import MIGRATIONS

    path = tasks_db_path(state_dir)
    if not path.exists():
        if _fleet_storage(state_dir):
            return [DoctorFinding("tasks", "ok", "kept in the fleet's PostgreSQL (storage.url); the storage.postgresql "
                                  "check covers its connection, `atomic-agent status` counts the tasks", "")]
        return [DoctorFinding("tasks", "ok", "no tasks.sqlite yet (created with the first task)", "")]
    try:
        conn = open_sqlite_read_only(path)
        try:
            integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
            schema = sqlite_migrations.read_schema_state(conn)
            newer = schema.newer_than(MIGRATIONS)
            counts = dict(conn.execute("SELECT status, count(*) FROM tasks GROUP BY status").fetchall()) \
                if "m001_tasks" in schema.applied else {}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [DoctorFinding("tasks", "error", f"{path} is not a usable database: {exc}",
                              "move it aside (tasks in it are lost) or restore a backup")]
    if integrity != "ok":
        return [DoctorFinding("tasks", "error", f"{path} failed its integrity check: {integrity}",
                              "restore a backup, or move it aside to start with no tasks")]
    if newer is not None:
        return [DoctorFinding("tasks", "error", f"{path} was written by a newer atomic-agent ({newer})",
                              "upgrade atomic-agent")]
    blocked = counts.get("blocked", 0)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no tasks"
    if blocked:
        return [DoctorFinding("tasks", "warn", f"{summary}", "blocked tasks hit a permanent failure: "
                              "`atomic-agent task list --status blocked`, then fix and re-create them")]
    return [DoctorFinding("tasks", "ok", summary, "")]


def _fleet_storage(state_dir: Path) -> bool:
    """Whether storage.url (or ATOMIC_AGENT_STORAGE_URL) names a database: the tasks live there."""
    import os

    from atomic_agent.api import ConfigError, read_raw_config

    if os.environ.get("ATOMIC_AGENT_STORAGE_URL", "").strip():
        return True
    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return False
    block = raw.get("storage")
    return isinstance(block, dict) and isinstance(block.get("url"), str) and bool(block["url"].strip())
