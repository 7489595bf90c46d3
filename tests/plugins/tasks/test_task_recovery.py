"""Runs once per occurrence across restarts: a process that dies before, during or after a
task's turn leaves no lost occurrence and no replayed side effect."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from atomic_agent.turns.request_keys import RequestKey
from tests.agent.loop_harness import ToolLog
from tests.plugins.tasks.task_child import EFFECTS, EffectTools, effect_then_hang
from tests.plugins.tasks.task_kit import FakeClock, runs, task_runtime, turns_with_text
from tests.turns.turn_kit import answering_provider, play_dead, users

REPO = Path(__file__).resolve().parents[3]


def _all_turns_with_text(rt, text: str) -> list:
    return [t for sid in rt.sessions.session_ids() for t in turns_with_text(rt, sid, text)]


async def test_stale_recovery_gives_back_an_attempt_whose_turn_was_never_admitted_and_it_runs_once(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("claimed then died")
    from atomic_agent.plugins.tasks.occurrence_plan import plan_claim

    claimed, _ = svc.store.claim(task.id, clock.now, "4242-deadbeef", lambda t: plan_claim(t, clock.now))
    assert claimed.status == "running"  # a process claimed it and died before admitting the turn
    await rt.close()
    rt = await task_runtime(tmp_path, answering_provider(), clock)  # start runs the recovery once
    svc = rt.service("tasks")
    back = svc.store.get(task.id)
    assert (back.status, back.attempts) == ("pending", 0)
    assert svc.runner.recover_stale() == []  # once per runtime: a second call does nothing
    await svc.runner.run_due()
    done = svc.store.get(task.id)
    assert done.status == "completed" and users(rt, done.session_id) == ["claimed then died"]
    assert runs(rt, task.id) == [("completed", 0)]
    await rt.close()


async def test_stale_recovery_leaves_the_running_rows_of_a_live_runtime_alone(tmp_path: Path):
    clock = FakeClock()
    live = await task_runtime(tmp_path, answering_provider(), clock)
    live_svc = live.service("tasks")
    task = live_svc.create("mine")
    from atomic_agent.plugins.tasks.occurrence_plan import plan_claim

    live_svc.store.claim(task.id, clock.now, live_svc.runner.owner, lambda t: plan_claim(t, clock.now))
    other = await task_runtime(tmp_path, answering_provider(), clock)
    assert other.service("tasks").store.get(task.id).status == "running"  # its owner still lives
    await other.close()
    await live.close()


async def test_a_crash_after_the_turn_completed_records_it_completed_without_running_it_again(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    sid = rt.open_session(None, tmp_path).id
    task = svc.create("finished just before the kill", session_id=sid)
    from atomic_agent.plugins.tasks.occurrence_plan import plan_claim

    claimed, _ = svc.store.claim(task.id, clock.now, "4242-deadbeef", lambda t: plan_claim(t, clock.now))
    result = await rt.run_turn(claimed.message, session_id=sid, origin="scheduler",
                               request_key=RequestKey(claimed.attempt_key, "fp"))
    assert result.state == "completed"  # ...and the process died before writing the outcome
    await rt.close()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    done = svc.store.get(task.id)
    assert (done.status, done.turn_id) == ("completed", result.turn_id)
    await svc.runner.run_due()
    assert len(turns_with_text(rt, sid, "finished just before the kill")) == 1
    await rt.close()


async def test_a_kill_during_a_run_never_replays_the_turn_and_records_the_occurrence_interrupted(tmp_path: Path):
    clock = FakeClock()
    log = ToolLog()
    first = await task_runtime(tmp_path, effect_then_hang(), clock, log=log, extra_plugins=[(EffectTools(tmp_path), "fx")])
    svc = first.service("tasks")
    task = svc.create("send the report", schedule={"kind": "interval", "everyMs": 3_600_000})
    clock.advance(3_600_000)
    zombie = asyncio.ensure_future(svc.runner.run_due())
    effects = tmp_path / EFFECTS
    await log.running("forever")  # the effect is done, t.hang runs
    play_dead(first)  # the kernel drops a killed process's locks
    svc._lease.release()
    second = await task_runtime(tmp_path, answering_provider(), clock, extra_plugins=[(EffectTools(tmp_path), "fx")])
    svc2 = second.service("tasks")
    after = svc2.store.get(task.id)
    assert after.status == "pending" and after.due_at == task.due_at + 3_600_000  # the next occurrence is armed
    [run] = svc2.store.runs(task.id)
    assert (run.status, run.occurrence_at) == ("interrupted", task.due_at) and run.turn_id
    report = await second.recover(resume=True)  # a host that resumes answers the interrupted turn
    await asyncio.gather(*report.results)
    assert len(effects.read_text().splitlines()) == 1  # the side effect happened once
    assert len(_all_turns_with_text(second, "send the report")) == 1  # the message was never sent again
    clock.advance(3_600_000)
    await svc2.runner.run_due()
    assert [r.status for r in svc2.store.runs(task.id)] == ["interrupted", "completed"]
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    await second.close()


async def test_sigkill_of_the_process_running_a_task_loses_no_occurrence_and_replays_nothing(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock, extra_plugins=[(EffectTools(tmp_path), "fx")])
    task = rt.service("tasks").create("one-shot with a side effect")
    await rt.close()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen([sys.executable, "-m", "tests.plugins.tasks.task_child", str(tmp_path), str(clock.now)],
                             cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    effects = tmp_path / EFFECTS
    try:
        for _ in range(3000):
            if effects.exists() or child.poll() is not None:
                break
            await asyncio.sleep(0.01)
        assert effects.exists(), child.communicate(timeout=5)
        await asyncio.sleep(0.2)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    log = ToolLog()
    rt = await task_runtime(tmp_path, answering_provider(), clock, log=log,
                            extra_plugins=[(EffectTools(tmp_path), "fx")])
    svc = rt.service("tasks")
    ended = svc.store.get(task.id)
    assert (ended.status, ended.last_error_category) == ("failed", "interrupted")
    assert [r.status for r in svc.store.runs(task.id)] == ["interrupted"]
    report = await rt.recover(resume=True)
    await asyncio.gather(*report.results)
    await svc.runner.run_due()
    assert len(effects.read_text().splitlines()) == 1
    assert len(_all_turns_with_text(rt, "one-shot with a side effect")) == 1
    await rt.close()
