"""One TaskStore, two engines: every transition of a task reads and writes the same on
tasks.sqlite and on the fleet's PostgreSQL (the store's SQL is shared; the engine gives the
due read and the row locks): claim once, finish conditional on the claim, give back an
unstarted attempt, cancel, pause, edit, delete, reports recorded once, run ids never reused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.tasks.occurrence_plan import ClaimPlan, SkippedBlock
from atomic_agent.plugins.tasks.pg_task_database import pg_task_database
from atomic_agent.plugins.tasks.task_database import TaskDatabase, tasks_db_path
from atomic_agent.plugins.tasks.task_errors import TaskStateError
from atomic_agent.plugins.tasks.task_store import TaskStore
from tests.plugins.postgresql.pg_kit import backend_on


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: Any, tmp_path: Path) -> Iterator[TaskStore]:
    if request.param == "sqlite":
        made = TaskStore(TaskDatabase.open(tasks_db_path(tmp_path)))
        yield made
        made.database.close()
        return
    backend = backend_on(request.getfixturevalue("postgresql_database"))
    try:
        yield TaskStore(pg_task_database(SharedDatabase(backend)))
    finally:
        backend.close()


def _add(store: TaskStore, name: str, due: int, **kw: Any) -> Any:
    return store.create(message=f"do {name}", origin="cli", wake_source="user", session_id=kw.pop("session_id", None),
                        session_mode=kw.pop("session_mode", "ephemeral"), schedule=kw.pop("schedule", None),
                        due_at=due, max_attempts=3, now=0, task_id=name, **kw)


def _run_now(task: Any) -> ClaimPlan:
    return ClaimPlan(task.due_at, (SkippedBlock(5, 2, "downtime"),))


def test_a_due_task_is_claimed_once_and_its_outcome_recorded_only_by_that_claim(store: TaskStore):
    _add(store, "a", 10, notify="telegram")
    _add(store, "later", 500)
    assert store.due_ids(100, 10) == ["a"]
    task, plan = store.claim("a", 100, "owner-1", _run_now)
    assert task is not None and task.status == "running" and task.owner == "owner-1" and task.attempts == 1
    assert plan is not None and plan.run_occurrence == 10
    assert store.claim("a", 100, "owner-2", _run_now) == (None, None)  # claimed: nobody else takes it
    assert store.due_ids(100, 10) == []
    store.record_turn(task, "turn-1")
    done = store.finish(task, run_status="completed", now=120, next_status="completed", reply="hi",
                        tool_calls=[{"tool": "fs.read", "status": "ok"}])
    assert done is not None and done.status == "completed" and done.owner is None and done.turn_id == "turn-1"
    assert store.finish(task, run_status="failed", now=130, next_status="failed") is None  # a stale writer
    assert [(r.status, r.skipped_count, r.reply) for r in store.runs("a")] == \
        [("skipped", 2, None), ("completed", 0, "hi")]
    assert store.runs("a")[1].tool_calls == [{"tool": "fs.read", "status": "ok"}]
    assert store.counts()["completed"] == 1 and store.counts()["pending"] == 1


def test_an_unstarted_attempt_is_given_back_uncounted_and_a_new_claim_gets_a_new_run_id(store: TaskStore):
    _add(store, "a", 10)
    task, _ = store.claim("a", 100, "owner-1", _run_now)
    assert task is not None
    first_ids = [r.id for r in store.runs("a")]
    back = store.release_unstarted(task, 110, "not started")
    assert back is not None and back.status == "pending" and back.attempts == 0 and back.last_error == "not started"
    again, _ = store.claim("a", 120, "owner-2", lambda t: ClaimPlan(t.due_at))
    assert again is not None and again.attempts == 1 and again.owner == "owner-2"
    assert max(first_ids) < min(r.id for r in store.runs("a") if r.status == "running")  # ids never reused


def test_retry_rearms_and_cancel_pause_edit_delete_keep_their_rules(store: TaskStore):
    _add(store, "a", 10)
    task, _ = store.claim("a", 100, "o", _run_now)
    assert task is not None
    retried = store.finish(task, run_status="retry", now=110, next_status="pending", next_due=200, error="503",
                           category="transport")
    assert retried is not None and retried.status == "pending" and retried.due_at == 200 and retried.attempts == 1
    again, _ = store.claim("a", 200, "o", lambda t: ClaimPlan(t.due_at))
    assert again is not None and again.attempts == 2
    assert store.cancel("a", 210).cancel_requested  # running: asked to stop
    with pytest.raises(TaskStateError, match="it is running"):
        store.delete("a")
    _add(store, "b", 300)
    assert store.set_paused("b", True, 10).status == "paused"
    assert store.edit("b", 20, message="do b better").message == "do b better"
    assert store.set_paused("b", False, 30).status == "pending"
    assert store.cancel("b", 40).status == "cancelled"
    assert store.cancel("b", 50).status == "cancelled"  # idempotent
    assert store.delete("b").id == "b"
    assert [t.id for t in store.list()] == ["a"]
    store.set_named_session("webhook:x", "s1")
    store.set_named_session("webhook:x", "s2")
    assert store.named_session("webhook:x") == "s2"
    store.stamp_wake("s2", "a", "user", 5, "occurrence 10 attempt 2")
    assert store.session_role("s2")["wake_detail"] == "occurrence 10 attempt 2"  # type: ignore[index]
    assert store.count_active_for_session("s2") == 0
