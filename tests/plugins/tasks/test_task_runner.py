"""The task runner's locked invariants, driven through the real runtime and a moved clock."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.plugins.tasks.task_backoff import next_delay_ms
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import until
from tests.plugins.tasks.task_kit import FakeClock, runs, task_runtime, turns_with_text
from tests.turns.turn_kit import answering_provider, replies


async def test_tasks_always_run_through_run_turn_with_origin_scheduler(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("water the plants")
    report = await rt.run_tick("tasks.scheduler") and await svc.runner.run_due()
    done = svc.store.get(task.id)
    assert done.status == "completed"
    lane = rt.lifecycle.ledger.lane(done.session_id)
    assert [(t.text, t.origin, t.state) for t in lane] == [("water the plants", "scheduler", "completed")]
    assert replies(rt, done.session_id) == ["re: water the plants"]
    assert report.claimed == 0  # the tick had already run it: a second pass finds nothing due
    await rt.close()


async def test_success_is_recorded_only_when_the_turn_completes(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("later", schedule={"kind": "at", "at": clock.now + 60_000})
    assert (task.status, task.completed_at, runs(rt, task.id)) == ("pending", None, [])
    assert (await svc.runner.run_due()).claimed == 0  # not due yet
    clock.advance(60_000)
    await svc.runner.run_due()
    done = svc.store.get(task.id)
    assert (done.status, done.completed_at) == ("completed", clock.now)
    [run] = svc.store.runs(task.id)
    assert (run.status, run.turn_id) == ("completed", done.turn_id)
    assert rt.lifecycle.ledger.get(run.turn_id).state == "completed"
    await rt.close()


async def test_transient_failures_retry_with_capped_exponential_backoff_then_fail(tmp_path: Path):
    clock = FakeClock()
    down = ProviderError("server down", status=503)
    provider = ScriptedProvider([down, down, down])
    rt = await task_runtime(tmp_path, provider, clock, maxAttempts=3, backoffInitialMs=1000, backoffMaxMs=1500)
    svc = rt.service("tasks")
    task = svc.create("ping the server")
    await svc.runner.run_due()
    first = svc.store.get(task.id)
    assert (first.status, first.attempts, first.due_at) == ("pending", 1, clock.now + 1000)
    assert first.last_error_category == "transport"
    clock.advance(999)
    assert (await svc.runner.run_due()).claimed == 0  # the backoff is respected
    clock.advance(1)
    await svc.runner.run_due()
    second = svc.store.get(task.id)
    assert (second.status, second.attempts, second.due_at) == ("pending", 2, clock.now + 1500)  # 2000 capped
    clock.advance(1500)
    await svc.runner.run_due()
    last = svc.store.get(task.id)
    assert (last.status, last.attempts, last.last_error_category) == ("failed", 3, "transport")
    assert runs(rt, task.id) == [("retry", 0), ("retry", 0), ("failed", 0)]
    assert [next_delay_ms(n, 1000, 60_000) for n in (1, 2, 3, 4, 10)] == [1000, 2000, 4000, 8000, 60_000]
    assert next_delay_ms(500, 1000, 60_000) == 60_000
    await rt.close()


async def test_a_grammar_failure_blocks_the_task_without_a_retry(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, ScriptedProvider([ProviderError("bad grammar", status=400)]), clock)
    svc = rt.service("tasks")
    task = svc.create("parse this")
    await svc.runner.run_due()
    blocked = svc.store.get(task.id)
    assert (blocked.status, blocked.attempts, blocked.last_error_category) == ("blocked", 1, "grammar")
    clock.advance(3_600_000)
    assert (await svc.runner.run_due()).claimed == 0
    assert runs(rt, task.id) == [("blocked", 0)]
    await rt.close()


async def test_a_tool_failure_blocks_the_task_without_a_retry(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, ScriptedProvider([RuntimeError("escaped the dispatch")]), clock)
    svc = rt.service("tasks")
    task = svc.create("do the thing")
    await svc.runner.run_due()
    blocked = svc.store.get(task.id)
    assert (blocked.status, blocked.last_error_category) == ("blocked", "tool")
    await rt.close()


class GatedProvider(ScriptedProvider):
    """Records when each session's inference starts and ends; a1's answer waits until b1's
    inference has begun (sessions that run at the same time overlap there, with no timer for
    a slow machine to outrun; run one after the other, a1 never answers)."""

    def __init__(self) -> None:
        super().__init__([])
        self.log: list[tuple[str, str]] = []

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        from tests.turns.turn_kit import latest_user_text

        text = latest_user_text(request.prompt)
        self.log.append(("enter", text))
        if text == "a1":
            await until(lambda: ("enter", "b1") in self.log)
        self.log.append(("exit", text))
        self.script.append(calls(("reply", {"text": f"re: {text}"})))
        return await super().complete(request, on_delta)


async def test_a_drain_is_sequential_within_a_session_and_parallel_across_sessions(tmp_path: Path):
    clock = FakeClock()
    provider = GatedProvider()
    rt = await task_runtime(tmp_path, provider, clock)
    svc = rt.service("tasks")
    a = rt.open_session(None, tmp_path).id
    b = rt.open_session(None, tmp_path).id
    svc.create("a1", session_id=a)
    svc.create("a2", session_id=a)
    svc.create("b1", session_id=b)
    report = await svc.runner.run_due()
    assert report.claimed == 3
    log = provider.log
    assert log.index(("exit", "a1")) < log.index(("enter", "a2"))  # one session: one after the other
    assert log.index(("enter", "b1")) < log.index(("exit", "a1"))  # another session: at the same time
    assert [t.text for t in rt.lifecycle.ledger.lane(a)] == ["a1", "a2"]
    await rt.close()


async def test_cancel_is_idempotent_on_terminal_rows(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    pending = svc.create("never mind", schedule={"kind": "at", "at": clock.now + 60_000})
    cancelled = svc.cancel(pending.id)
    assert cancelled.status == "cancelled"
    clock.advance(5000)
    assert svc.cancel(pending.id) == cancelled  # unchanged, updated_at included
    done = svc.create("do it")
    await svc.runner.run_due()
    completed = svc.store.get(done.id)
    assert svc.cancel(done.id) == completed
    clock.advance(120_000)
    assert (await svc.runner.run_due()).claimed == 0  # the cancelled one never runs
    assert svc.store.runs(pending.id) == []
    await rt.close()


async def test_cancelling_a_running_task_ends_its_turn_cancelled(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("hang on a slow read")
    drain = asyncio.ensure_future(svc.runner.run_due())

    def turn_admitted() -> bool:
        row = svc.store.get(task.id)
        return row.status == "running" and bool(row.session_id) and bool(rt.lifecycle.ledger.lane(row.session_id))

    await until(turn_admitted)
    assert svc.cancel(task.id).status == "running"  # asked to stop; the runner records the end
    await drain
    ended = svc.store.get(task.id)
    assert ended.status == "cancelled", (ended.last_error, ended.last_error_category)
    assert svc.cancel(task.id) == ended
    await rt.close()


async def test_stopping_one_firing_of_a_recurring_task_keeps_its_schedule_and_cancel_ends_it(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("hang around hourly", schedule={"kind": "interval", "everyMs": 3_600_000})
    clock.advance(3_600_000)
    drain = asyncio.ensure_future(svc.runner.run_due())
    await until(lambda: rt.stop(task.session_id))  # the user pressed stop on this one firing
    await drain
    after = svc.store.get(task.id)
    assert (after.status, after.due_at) == ("pending", task.due_at + 3_600_000)
    assert [r.status for r in svc.store.runs(task.id)] == ["cancelled"]
    clock.advance(3_600_000)
    drain = asyncio.ensure_future(svc.runner.run_due())
    await until(lambda: svc.store.get(task.id).status == "running" and rt.turns.is_busy(task.session_id))
    svc.cancel(task.id)  # the task itself is cancelled: no more firings
    await drain
    assert svc.store.get(task.id).status == "cancelled"
    await rt.close()


async def test_a_cancel_written_by_another_process_reaches_the_running_turn(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    svc.runner.cancel_poll_s = 0.01
    task = svc.create("hang on a slow read")
    drain = asyncio.ensure_future(svc.runner.run_due())
    await until(lambda: svc.store.get(task.id).status == "running")
    from atomic_agent.plugins.tasks.task_service import TaskService

    other = TaskService(rt.state_dir, svc.config, clock=clock)  # the CLI: no runtime, its own connection
    assert other.cancel(task.id).cancel_requested
    other.close()
    await asyncio.wait_for(drain, 30)
    assert svc.store.get(task.id).status == "cancelled"
    await rt.close()


async def test_a_given_session_that_was_deleted_blocks_the_task(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    sid = rt.open_session(None, tmp_path).id
    task = svc.create("in my session", session_id=sid)
    rt.sessions.delete(sid)
    await svc.runner.run_due()
    blocked = svc.store.get(task.id)
    assert (blocked.status, blocked.last_error_category) == ("blocked", "session_not_found")
    await rt.close()


async def test_text_the_runtime_refuses_is_refused_at_create(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    bad = b"\xff".decode("utf-8", "surrogateescape")
    for message, field in (("", "message"), ("  ", "message"), (f"x{bad}", "message")):
        try:
            svc.create(message)
        except svc.ValidationError as exc:
            assert exc.field == field
        else:
            raise AssertionError(f"{message!r} was accepted")
    assert svc.store.list() == []
    assert turns_with_text(rt, "nope", "x") == []
    await rt.close()


async def test_tasks_switched_off_register_no_tick_and_no_tools_but_keep_the_store(tmp_path: Path):
    rt = await task_runtime(tmp_path, answering_provider(), FakeClock(), enabled=False)
    assert "tasks.scheduler" not in rt.ticks.specs
    assert not [s.name for s in rt.registry.specs() if s.name.startswith("tasks.")]
    assert rt.service("tasks").store.list() == []  # the CLI still reads it
    await rt.close()


async def test_transitions_are_counted_in_the_metrics_service(tmp_path: Path):
    import atomic_agent.plugins.metrics as metrics_plugin

    clock = FakeClock()
    provider = ScriptedProvider([ProviderError("down", status=503)])
    rt = await task_runtime(tmp_path, provider, clock, extra_plugins=[(metrics_plugin, "metrics")])
    svc = rt.service("tasks")
    svc.create("count me")
    await svc.tick()
    clock.advance(60_000)
    await svc.tick()
    metrics = rt.service("metrics")
    counted = {name: metrics.counter_total(f"agent.tasks.{name}") for name in
               ("created", "started", "retried", "completed", "failed", "blocked")}
    assert counted == {"created": 1, "started": 2, "retried": 1, "completed": 1, "failed": 0, "blocked": 0}
    assert metrics.counter_total("agent.scheduler.ticks") == 2
    assert metrics.histogram("agent.tasks.duration_ms") is not None
    await rt.close()
