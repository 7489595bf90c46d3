"""The session rules of scheduled tasks, and the wake reason stamped before each run."""

from __future__ import annotations

from pathlib import Path

from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import answering_provider, users


async def test_a_one_shot_without_a_session_gets_a_lazy_ephemeral_session_written_back_before_the_run(
        tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    before = set(rt.sessions.session_ids())
    task = svc.create("one-off", schedule={"kind": "at", "at": clock.now + 1000})
    assert task.session_id is None and set(rt.sessions.session_ids()) == before  # nothing made at create
    clock.advance(1000)
    await svc.runner.run_due()
    done = svc.store.get(task.id)
    assert done.session_id is not None and done.session_id not in before
    assert users(rt, done.session_id) == ["one-off"]
    assert svc.store.session_role(done.session_id)["role"] == "ephemeral"
    await rt.close()


async def test_a_recurring_task_reuses_one_persistent_session_and_requeue_never_touches_it(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("hourly check", schedule={"kind": "interval", "everyMs": 3_600_000})
    sid = task.session_id
    assert sid is not None and rt.sessions.exists(sid)  # made eagerly, at create
    for _ in range(3):
        clock.advance(3_600_000)
        await svc.runner.run_due()
        again = svc.store.get(task.id)
        assert (again.status, again.session_id, again.attempts) == ("pending", sid, 0)
    assert users(rt, sid) == ["hourly check"] * 3
    assert svc.store.session_role(sid)["role"] == "recurring"
    await rt.close()


async def test_a_recurring_task_whose_session_was_deleted_continues_in_a_recreated_one(tmp_path: Path, capsys):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("hourly check", schedule={"kind": "interval", "everyMs": 3_600_000})
    rt.sessions.delete(task.session_id)
    clock.advance(3_600_000)
    await svc.runner.run_due()
    again = svc.store.get(task.id)
    assert again.session_id != task.session_id and rt.sessions.exists(again.session_id)
    assert users(rt, again.session_id) == ["hourly check"]
    assert again.status == "pending" and svc.store.runs(task.id)[-1].status == "completed"
    assert f"its session {task.session_id} was deleted" in capsys.readouterr().err
    await rt.close()


async def test_the_wake_reason_is_stamped_before_each_run_and_stays_out_of_the_prompt(tmp_path: Path):
    clock = FakeClock()
    provider = answering_provider()
    rt = await task_runtime(tmp_path, provider, clock)
    svc = rt.service("tasks")
    sid = rt.open_session(None, tmp_path).id
    task = svc.create("scheduled by me", session_id=sid, origin="agent", wake_source="agent")
    await svc.runner.run_due()
    role = svc.store.session_role(sid)
    assert (role["wake_source"], role["wake_task_id"], role["wake_at"]) == ("agent", task.id, clock.now)
    stamped = f"occurrence {task.occurrence_at} attempt 1"  # what the stamp's detail says
    assert role["wake_detail"] == stamped
    assert provider.requests and all(task.id not in r.prompt and stamped not in r.prompt and "wake_source" not in
                                     r.prompt for r in provider.requests)
    await rt.close()
