"""A scheduled task with `notify: telegram` reports its outcome to the paired owner's phone,
through the tasks plugin's `report_sink` service the Telegram channel provides."""

from __future__ import annotations

from atomic_agent.api import ScriptedProvider
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, phone_sees, reply_texts, start_runtime, write_state


async def test_a_notify_task_reports_its_outcome_to_the_owner(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([calls(("reply", {"text": "backup finished: 3 files"}))] * 4)
    runtime = await start_runtime(state, provider)
    try:
        tasks = runtime.service("tasks")
        task = tasks.create("run the nightly backup", notify="telegram", working_dir=tmp_path)
        await tasks.tick()
        await phone_sees(bot_api, lambda: any("backup finished" in t for t in reply_texts(bot_api, OWNER)))
        report = next(t for t in reply_texts(bot_api, OWNER) if "backup finished" in t)
        assert report.startswith(f"Task {task.id} completed") and "run the nightly backup" in report
        assert [d.status for d in tasks.reports.deliveries(task.id)] == ["delivered"]
    finally:
        await runtime.close()
