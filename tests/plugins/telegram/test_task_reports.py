"""A task the agent schedules with `notify: telegram` fires and reports its outcome to the
paired owner's phone (the loopback Bot API), through the tasks plugin's `report_sink`
service the Telegram channel provides."""

from __future__ import annotations

from atomic_agent.api import ScriptedProvider
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.tasks.task_kit import FakeClock

from .channel_harness import OWNER, phone_sees, reply_texts, start_runtime, write_state


async def test_a_tool_scheduled_task_fires_and_notifies_the_owner(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([
        calls(("tasks.schedule", {"message": "run the nightly backup", "inMinutes": 5, "notify": "telegram"})),
        calls(("reply", {"text": "scheduled"})),
        calls(("reply", {"text": "backup finished: 3 files"})),
    ])
    runtime = await start_runtime(state, provider)
    try:
        tasks = runtime.service("tasks")
        clock = FakeClock()
        tasks.clock = clock
        scheduled = await runtime.run_turn("back up tonight and tell me on telegram", working_dir=tmp_path)
        assert scheduled.status == "done"
        [task] = tasks.store.list()
        assert task.notify == "telegram" and task.origin == "agent"
        await tasks.tick()  # not due yet: nothing runs, nothing is sent
        assert not any(t.startswith("Task ") for t in reply_texts(bot_api, OWNER))
        clock.advance(6 * 60_000)
        await tasks.tick()
        await phone_sees(bot_api, lambda: any(t.startswith("Task ") for t in reply_texts(bot_api, OWNER)))
        report = next(t for t in reply_texts(bot_api, OWNER) if t.startswith("Task "))
        assert report.startswith(f"Task {task.id} completed") and "run the nightly backup" in report
        assert [d.status for d in tasks.reports.deliveries(task.id)] == ["delivered"]
    finally:
        await runtime.close()
