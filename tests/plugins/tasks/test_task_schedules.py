"""Schedules: validation, cron with a time zone across DST, and the missed-occurrence contract."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from atomic_agent.plugins.tasks.task_errors import TaskValidationError
from atomic_agent.plugins.tasks.task_schedule import grace_ms, next_occurrence, parse_schedule
from tests.plugins.tasks.task_kit import FakeClock, runs, task_runtime
from tests.turns.turn_kit import answering_provider, users

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(*parts: int) -> int:
    return int(datetime(*parts, tzinfo=BERLIN).timestamp() * 1000)


@pytest.mark.parametrize(("raw", "field"), [
    ({"kind": "cron", "expression": "61 * * * *"}, "expression"),
    ({"kind": "cron", "expression": "* * * *"}, "expression"),
    ({"kind": "cron", "expression": "0 9 * * *", "tz": "Mars/Olympus"}, "tz"),
    ({"kind": "interval", "everyMs": 999}, "everyMs"),
    ({"kind": "interval", "everyMs": -5}, "everyMs"),
    ({"kind": "at", "at": 1_000}, "at"),
    ({"kind": "at", "at": "tomorrow"}, "at"),
    ({"kind": "weekly"}, "kind"),
])
def test_bad_schedules_are_refused_naming_the_field(raw: dict, field: str):
    with pytest.raises(TaskValidationError) as caught:
        parse_schedule(raw, now_ms=berlin(2026, 6, 1, 12, 0), min_interval_ms=1000)
    assert caught.value.field == field


def test_a_cron_time_in_the_spring_forward_gap_is_skipped_with_the_reason():
    daily = {"kind": "cron", "expression": "30 2 * * *", "tz": "Europe/Berlin"}
    found = next_occurrence(daily, berlin(2026, 3, 28, 3, 0))
    assert found.due_at == berlin(2026, 3, 30, 2, 30)
    [gap] = found.skipped
    assert "2026-03-29 02:30 does not exist in Europe/Berlin" in gap.reason


def test_a_cron_time_in_the_fall_back_overlap_runs_once():
    daily = {"kind": "cron", "expression": "30 2 * * *", "tz": "Europe/Berlin"}
    first = next_occurrence(daily, berlin(2026, 10, 24, 3, 0)).due_at
    assert first == int(datetime(2026, 10, 25, 2, 30, fold=0, tzinfo=BERLIN).timestamp() * 1000)
    second = next_occurrence(daily, first).due_at
    assert second == berlin(2026, 10, 26, 2, 30)  # not the repeated 02:30 one hour later


def test_a_cron_without_a_time_zone_is_utc():
    nine = {"kind": "cron", "expression": "0 9 * * *"}
    start = int(datetime(2026, 1, 1, tzinfo=ZoneInfo("UTC")).timestamp() * 1000)
    assert next_occurrence(nine, start).due_at == start + 9 * 3_600_000


def test_the_grace_window_is_half_the_period_clamped_to_two_minutes_and_two_hours():
    assert grace_ms(60_000) == 120_000
    assert grace_ms(3_600_000) == 1_800_000
    assert grace_ms(86_400_000) == 7_200_000


async def test_a_zoned_cron_task_runs_across_the_dst_change_and_records_the_skipped_time(tmp_path: Path):
    clock = FakeClock(berlin(2026, 3, 27, 3, 0))
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("nightly", schedule={"kind": "cron", "expression": "30 2 * * *", "tz": "Europe/Berlin"})
    assert task.due_at == berlin(2026, 3, 28, 2, 30)
    clock.set(berlin(2026, 3, 28, 2, 30))
    await svc.runner.run_due()
    after = svc.store.get(task.id)
    assert after.due_at == berlin(2026, 3, 30, 2, 30)  # 2026-03-29 02:30 does not exist in Berlin
    history = svc.store.runs(task.id)
    assert [(r.status, r.occurrence_at) for r in history] == [("completed", berlin(2026, 3, 28, 2, 30)),
                                                             ("skipped", berlin(2026, 3, 29, 2, 30))]
    assert "daylight saving" in history[1].reason
    clock.set(berlin(2026, 3, 30, 2, 30))
    await svc.runner.run_due()
    assert users(rt, task.session_id) == ["nightly", "nightly"]
    await rt.close()


async def test_a_backlog_after_downtime_collapses_into_one_catch_up_run_and_records_the_rest_skipped(
        tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("every minute", schedule={"kind": "interval", "everyMs": 60_000})
    first_due = task.due_at
    await rt.close()
    clock.set(first_due + 9 * 60_000 + 30_000)  # down for ten occurrences; the last is 30 s old
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    await svc.runner.run_due()
    history = svc.store.runs(task.id)
    assert [(r.status, r.skipped_count, r.occurrence_at) for r in history] == [
        ("skipped", 9, first_due), ("completed", 0, first_due + 9 * 60_000)]
    assert users(rt, task.session_id) == ["every minute"]
    assert svc.store.get(task.id).due_at == first_due + 10 * 60_000
    await rt.close()


async def test_a_missed_occurrence_older_than_the_grace_window_is_skipped_not_run(tmp_path: Path):
    clock = FakeClock(berlin(2026, 6, 1, 8, 0))
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    task = svc.create("morning report", schedule={"kind": "cron", "expression": "0 9 * * *", "tz": "Europe/Berlin"})
    clock.set(berlin(2026, 6, 4, 8, 0))  # three days down; yesterday's 09:00 is 23 h old (grace: 2 h)
    await svc.runner.run_due()
    assert runs(rt, task.id) == [("skipped", 2), ("skipped", 1)]
    assert "past the grace window" in svc.store.runs(task.id)[-1].reason
    assert svc.store.get(task.id).due_at == berlin(2026, 6, 4, 9, 0)
    assert users(rt, task.session_id) == []
    clock.set(berlin(2026, 6, 4, 9, 0))
    await svc.runner.run_due()
    assert users(rt, task.session_id) == ["morning report"]
    await rt.close()


async def test_a_one_shot_due_while_the_runtime_was_down_fires_once_after_restart(tmp_path: Path):
    clock = FakeClock()
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    task = rt.service("tasks").create("remind me", schedule={"kind": "at", "at": clock.now + 60_000})
    await rt.close()
    clock.advance(86_400_000)  # a day late: an obligation still
    rt = await task_runtime(tmp_path, answering_provider(), clock)
    svc = rt.service("tasks")
    await svc.runner.run_due()
    await svc.runner.run_due()
    done = svc.store.get(task.id)
    assert done.status == "completed" and users(rt, done.session_id) == ["remind me"]
    await rt.close()
