"""tasks.sqlite through the core storage layer: idempotent migrations, the partial due index,
refusal of a file it cannot use, and what doctor says about it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.plugins.tasks.doctor_findings import task_findings
from atomic_agent.plugins.tasks.task_database import TaskDatabase, tasks_db_path
from atomic_agent.plugins.tasks.task_errors import TaskStoreError
from atomic_agent.plugins.tasks.task_schema import MIGRATIONS, TASK_SCHEMA_VERSION
from atomic_agent.plugins.tasks.task_store import TaskStore


def _store(tmp_path: Path) -> TaskStore:
    return TaskStore(TaskDatabase.open(tasks_db_path(tmp_path)))


def _add(store: TaskStore, n: int, due: int) -> None:
    store.create(message=f"t{n}", origin="cli", wake_source="user", session_id=None, session_mode="ephemeral",
                 schedule=None, due_at=due, max_attempts=3, now=0, task_id=f"t{n:06d}")


def test_migrations_are_idempotent_and_rerun_safely_after_a_crash_before_their_record(tmp_path: Path):
    store = _store(tmp_path)
    _add(store, 1, 10)
    store.database.conn.execute("DELETE FROM _migrations")  # a crash between each step and its record
    store.database.close()
    again = _store(tmp_path)
    assert [r["name"] for r in again.database.query("SELECT name FROM _migrations ORDER BY name")] == \
        [m.__name__ for m in MIGRATIONS]
    assert again.database.conn.execute("PRAGMA user_version").fetchone()[0] == TASK_SCHEMA_VERSION
    assert again.get("t000001").message == "t1"  # nothing lost
    again.database.close()


def test_the_scheduler_finds_due_work_only_through_the_partial_index(tmp_path: Path):
    store = _store(tmp_path)
    for n in range(50):
        _add(store, n, due=n)
    store.database.conn.execute("UPDATE tasks SET status = 'completed' WHERE due_at < 10")
    plan = " ".join(str(row) for row in store.database.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM tasks INDEXED BY idx_tasks_due WHERE status = 'pending' AND due_at <= ? "
        "ORDER BY due_at LIMIT ?", [20, 5]))
    assert "idx_tasks_due" in plan and "SCAN tasks" not in plan
    assert store.due_ids(20, 5) == [f"t{n:06d}" for n in range(10, 15)]
    index_sql = store.database.query("SELECT sql FROM sqlite_master WHERE name = 'idx_tasks_due'")[0]["sql"]
    assert "WHERE status = 'pending'" in index_sql
    store.database.close()


def test_a_corrupt_tasks_file_is_refused_untouched_and_doctor_reports_it(tmp_path: Path):
    path = tasks_db_path(tmp_path)
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(TaskStoreError) as caught:
        TaskDatabase.open(path)
    assert str(path) in str(caught.value) and "left untouched" in str(caught.value)
    assert path.read_bytes() == before
    [finding] = task_findings(tmp_path)
    assert finding.level == "error" and "not a usable database" in finding.detail


def test_a_tasks_file_from_a_newer_build_is_refused(tmp_path: Path):
    _store(tmp_path).database.close()
    conn = sqlite3.connect(tasks_db_path(tmp_path))
    conn.execute(f"PRAGMA user_version = {TASK_SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(TaskStoreError, match="newer atomic-agent"):
        TaskDatabase.open(tasks_db_path(tmp_path))


def test_doctor_warns_about_blocked_tasks_and_says_ok_otherwise(tmp_path: Path):
    assert task_findings(tmp_path)[0].level == "ok"  # no file yet
    store = _store(tmp_path)
    _add(store, 1, 10)
    assert task_findings(tmp_path)[0].level == "ok"
    store.database.conn.execute("UPDATE tasks SET status = 'blocked'")
    [finding] = task_findings(tmp_path)
    assert finding.level == "warn" and "1 blocked" in finding.detail
    store.database.close()
