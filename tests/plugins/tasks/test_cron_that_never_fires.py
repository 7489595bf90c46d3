"""Class: a cron expression no calendar date matches (day 30 of February). It passed validation
and then croniter's CroniterBadDateError reached the user as a traceback. `task create --cron`
and the agent's tasks.cron now refuse it with a clear error; a schedule stored before that is
simply over, never a crash of the runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.cli.main import main
from atomic_agent.plugins.tasks.task_errors import TaskValidationError
from atomic_agent.plugins.tasks.task_schedule import next_occurrence, parse_schedule
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.plugins.tasks.test_task_tools import model, tool_results

NEVER = ["0 0 30 2 *", "0 0 31 4 *", "0 0 31 2,4,6 *", "15 3 31 11 *", "0 12 30,31 2 *", "*/5 * 31 9 *"]
FIRES = ["0 0 29 2 *", "0 0 L 2 *", "0 0 31 1-12 *", "0 0 30 2 1"]  # leap day; last day; some month has 31; or weekday


@pytest.mark.parametrize("expression", NEVER)
def test_cron_that_never_fires_is_refused_with_a_clear_error(expression: str) -> None:
    with pytest.raises(TaskValidationError, match="never fires") as caught:
        parse_schedule({"kind": "cron", "expression": expression}, now_ms=0, min_interval_ms=60_000)
    assert "February has at most 29 days" in str(caught.value)


@pytest.mark.parametrize("expression", FIRES)
def test_cron_that_never_fires_spares_expressions_that_do_fire(expression: str) -> None:
    stored = parse_schedule({"kind": "cron", "expression": expression}, now_ms=0, min_interval_ms=60_000)
    assert next_occurrence(stored, 0).due_at is not None


@pytest.mark.parametrize("expression", NEVER[:3])
def test_cron_that_never_fires_stored_earlier_is_over_not_a_crash(expression: str) -> None:
    assert next_occurrence({"kind": "cron", "expression": expression}, 0).due_at is None


@pytest.mark.parametrize("expression", NEVER[:3])
def test_cron_that_never_fires_task_create_prints_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               expression: str) -> None:
    state = tmp_path / "state"
    with pytest.raises(SystemExit) as exited:
        main(["--state-dir", str(state), "task", "create", "leap report", "--cron", expression])
    err = capsys.readouterr().err
    assert exited.value.code not in (0, None)
    assert "never fires" in err and expression in err and "Traceback" not in err


async def test_cron_that_never_fires_from_the_agent_is_a_tool_error_it_can_fix(tmp_path: Path) -> None:
    steps = [("tasks.cron", {"message": "x", "expression": expression}) for expression in NEVER[:3]]
    rt = await task_runtime(tmp_path, model(*steps), FakeClock())
    try:
        sid = (await rt.run_turn("schedule on impossible days")).session_id
        results = tool_results(rt, sid)
        assert [(tool, status) for tool, status, _ in results] == [("tasks.cron", "error")] * 3
        assert all("never fires" in text for _, _, text in results)
        assert rt.service("tasks").store.list() == []
    finally:
        await rt.close()
