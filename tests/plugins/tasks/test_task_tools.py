"""The agent schedules its own work: tasks.schedule | cron | list | show | cancel, called by the
model inside a real turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import users


def tool_results(rt: Any, sid: str) -> list[tuple[str, str, str]]:
    return [(e.tool, e.status, e.text) for e in rt.sessions.load(sid).entries if e.kind == "tool_result"]


def model(*steps: tuple[str, dict]) -> ScriptedProvider:
    return ScriptedProvider([calls(step) for step in steps] + [calls(("reply", {"text": "ok"}))] * 4)


async def test_a_task_the_model_schedules_fires_later_in_its_own_session(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, model(("tasks.schedule", {"message": "check the oven", "inMinutes": 30})), clock)
    svc = rt.service("tasks")
    result = await rt.run_turn("remind me to check the oven in half an hour")
    sid = result.session_id
    [(tool, status, text)] = tool_results(rt, sid)
    assert (tool, status) == ("tasks.schedule", "ok") and "scheduled task" in text
    [task] = svc.store.list()
    assert (task.origin, task.wake_source, task.session_id, task.due_at) == ("agent", "agent", sid,
                                                                           clock.now + 30 * 60_000)
    clock.advance(30 * 60_000)
    await svc.runner.run_due()
    assert users(rt, sid) == ["remind me to check the oven in half an hour", "check the oven"]
    assert [t.origin for t in rt.lifecycle.ledger.lane(sid)] == ["cli", "scheduler"]
    await rt.close()


async def test_bad_schedules_from_the_model_come_back_as_structured_errors_it_can_fix(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, model(
        ("tasks.schedule", {"message": "x", "at": "yesterday"}),
        ("tasks.schedule", {"message": "x", "at": "2020-01-01T00:00:00+00:00"}),
        ("tasks.schedule", {"message": "x"}),
        ("tasks.cron", {"message": "x", "expression": "0 9 * * *", "tz": "Nowhere/City"}),
        ("tasks.show", {"id": "nope"}),
        ("tasks.list", {"status": "sleeping"})), clock)
    sid = (await rt.run_turn("schedule badly")).session_id
    errors = [(tool, status) for tool, status, _ in tool_results(rt, sid)]
    assert errors == [("tasks.schedule", "error"), ("tasks.schedule", "error"), ("tasks.schedule", "error"),
                      ("tasks.cron", "error"), ("tasks.show", "error"), ("tasks.list", "error")]
    texts = [text for _, _, text in tool_results(rt, sid)]
    assert "invalid at" in texts[0] and "in the past" in texts[1] and "exactly one" in texts[2]
    assert "invalid tz" in texts[3] and "no task" in texts[4] and "unknown status" in texts[5]
    assert rt.service("tasks").store.list() == []
    await rt.close()


async def test_creating_recurring_work_asks_under_its_approval_category(tmp_path: Path):
    asked: list[Any] = []

    async def ask(request: Any) -> bool:
        asked.append(request)
        return len(asked) > 1  # no the first time, yes the second

    clock = FakeClock()
    cron = ("tasks.cron", {"message": "standup notes", "expression": "0 9 * * 1-5", "tz": "Europe/Berlin"})
    rt = await task_runtime(tmp_path, model(cron, cron), clock, ask=ask)
    sid = (await rt.run_turn("every weekday at nine")).session_id
    assert [r.category for r in asked] == ["tasks_recurring", "tasks_recurring"]
    assert [status for _, status, _ in tool_results(rt, sid)] == ["error", "ok"]
    [task] = rt.service("tasks").store.list()
    assert task.recurring and task.session_id != sid  # recurring work gets its own persistent session
    assert task.created_by_session == sid
    await rt.close()


async def test_the_model_lists_shows_and_cancels_its_tasks_and_cancel_is_idempotent(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, model(("tasks.schedule", {"message": "later", "inMinutes": 5})), clock)
    svc = rt.service("tasks")
    sid = (await rt.run_turn("plan")).session_id
    [task] = svc.store.list()
    rt._provider = model(("tasks.list", {}), ("tasks.show", {"id": task.id}), ("tasks.cancel", {"id": task.id}),
                         ("tasks.cancel", {"id": task.id}))
    await rt.run_turn("tidy up", session_id=sid)
    results = tool_results(rt, sid)[1:]
    assert [(tool, status) for tool, status, _ in results] == [
        ("tasks.list", "ok"), ("tasks.show", "ok"), ("tasks.cancel", "ok"), ("tasks.cancel", "ok")]
    assert task.id in results[0][2] and "never ran" in results[1][2]
    assert results[2][2] == results[3][2] == f"task {task.id} is cancelled"
    await rt.close()


async def test_a_session_holds_at_most_the_configured_number_of_active_tasks(tmp_path: Path):
    clock = FakeClock()
    step = ("tasks.schedule", {"message": "again", "inMinutes": 5})
    rt = await task_runtime(tmp_path, model(step, step, step), clock, maxActivePerSession=2)
    sid = (await rt.run_turn("flood")).session_id
    results = tool_results(rt, sid)
    assert [status for _, status, _ in results] == ["ok", "ok", "error"]
    assert "limit 2" in results[2][2]
    assert len(rt.service("tasks").store.list()) == 2
    await rt.close()


async def test_the_tools_are_rare_closed_and_only_cron_asks(tmp_path: Path):
    rt = await task_runtime(tmp_path, model(), FakeClock())
    specs = {name: rt.registry.get(name) for name in ("tasks.schedule", "tasks.cron", "tasks.list", "tasks.show",
                                                     "tasks.cancel")}
    assert all(spec.tier.value == "rare" for spec in specs.values())  # one line each in the stable prefix
    assert all(spec.args_schema["additionalProperties"] is False for spec in specs.values())
    assert {n for n, spec in specs.items() if spec.approval_category} == {"tasks.cron"}
    assert {n for n, spec in specs.items() if spec.resource_class.value == "pure_read"} == {"tasks.list", "tasks.show"}
    await rt.close()
