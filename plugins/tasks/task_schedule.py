"""Schedules (`at`, `cron` with an optional IANA time zone, `interval`) and the one function
that turns a schedule into its next occurrence. The only module that imports croniter.

Cron expressions are evaluated on the wall clock of their time zone (UTC without one), then
each wall-clock time is placed on the real timeline:

- a time the zone skips (the spring-forward gap: 02:30 on the day clocks jump from 02:00 to
  03:00) does not exist, so that occurrence is *skipped* and reported with the reason;
- a time the zone repeats (the fall-back overlap) runs once, at its first instant.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta, timezone
from typing import Any

import attrs

from .task_errors import TaskValidationError

AT, CRON, INTERVAL = "at", "cron", "interval"
SCHEDULE_KINDS = (AT, CRON, INTERVAL)
GRACE_MIN_MS = 2 * 60_000
GRACE_MAX_MS = 2 * 3_600_000
MAX_GAP_STEPS = 1000  # a cron whose every time falls in gaps is a bug in the expression, not a reason to spin


@attrs.frozen
class SkippedTime:
    occurrence_at: int
    reason: str


@attrs.frozen
class NextOccurrence:
    """The next occurrence strictly after the given instant (None: the schedule is over),
    and the occurrences before it that do not exist on the real timeline."""

    due_at: int | None
    skipped: tuple[SkippedTime, ...] = ()


def _zone(name: str | None) -> Any:
    if not name:
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise TaskValidationError("tz", f"{name!r} is not an IANA time zone (e.g. Europe/Berlin, "
                                        "America/New_York)") from exc


def _check_cron(expression: str) -> None:
    from croniter import croniter

    fields = expression.split()
    if len(fields) != 5 or not croniter.is_valid(expression):
        raise TaskValidationError("expression", f"{expression!r} is not a 5-field cron expression "
                                                "(minute hour day-of-month month day-of-week, e.g. '30 7 * * 1-5')")
    if not _ever_fires(expression):
        raise TaskValidationError("expression", f"{expression!r} never fires: no month has the day it names "
                                                "(February has at most 29 days; April, June, September and "
                                                "November 30). Pick a day every named month has, or use 'L' "
                                                "for the last day of the month (e.g. '0 0 L 2 *')")


def _ever_fires(expression: str) -> bool:
    """False for a valid expression that no calendar date matches (day 30 of February)."""
    from croniter import CroniterBadDateError, croniter

    try:  # croniter searches years ahead (leap years included) before it gives up
        croniter(expression, datetime(2000, 1, 1)).get_next(datetime)
    except CroniterBadDateError:
        return False
    return True


def parse_schedule(raw: Mapping[str, Any], *, now_ms: int, min_interval_ms: int) -> dict[str, Any]:
    """Validate a schedule given as {"kind": ..., ...}; returns the stored form."""
    kind = raw.get("kind")
    if kind == AT:
        at = raw.get("at")
        if isinstance(at, bool) or not isinstance(at, int):
            raise TaskValidationError("at", "must be epoch milliseconds")
        if at <= now_ms:
            raise TaskValidationError("at", f"{_iso(at)} is in the past (now is {_iso(now_ms)})")
        return {"kind": AT, "at": at}
    if kind == CRON:
        expression = str(raw.get("expression") or "").strip()
        _check_cron(expression)
        tz = raw.get("tz") or None
        _zone(tz)
        return {"kind": CRON, "expression": expression, **({"tz": tz} if tz else {})}
    if kind == INTERVAL:
        every = raw.get("everyMs")
        if isinstance(every, bool) or not isinstance(every, int) or every <= 0:
            raise TaskValidationError("everyMs", "must be a positive number of milliseconds")
        if every < min_interval_ms:
            raise TaskValidationError("everyMs", f"{every} ms is under the minimum interval of {min_interval_ms} ms "
                                                 "(tasks.minIntervalMs)")
        return {"kind": INTERVAL, "everyMs": every, "anchor": int(raw.get("anchor", now_ms))}
    raise TaskValidationError("kind", f"unknown schedule kind {kind!r}; use one of {', '.join(SCHEDULE_KINDS)}")


def next_occurrence(schedule: Mapping[str, Any], after_ms: int) -> NextOccurrence:
    """The first occurrence of `schedule` strictly after `after_ms` (epoch ms)."""
    kind = schedule["kind"]
    if kind == AT:
        at = int(schedule["at"])
        return NextOccurrence(at if at > after_ms else None)
    if kind == INTERVAL:
        every, anchor = int(schedule["everyMs"]), int(schedule.get("anchor", 0))
        if after_ms < anchor:
            return NextOccurrence(anchor)
        return NextOccurrence(anchor + ((after_ms - anchor) // every + 1) * every)
    return _next_cron(str(schedule["expression"]), schedule.get("tz"), after_ms)


def _next_cron(expression: str, tz_name: str | None, after_ms: int) -> NextOccurrence:
    from croniter import CroniterBadDateError, croniter

    zone = _zone(tz_name)
    after = datetime.fromtimestamp(after_ms / 1000, tz=timezone.utc)
    # walk the zone's wall clock; start a little before `after` so a repeated hour is not missed
    wall_start = after.astimezone(zone).replace(tzinfo=None) - timedelta(hours=3)
    walker = croniter(expression, wall_start)
    skipped: list[SkippedTime] = []
    for _ in range(MAX_GAP_STEPS + 24 * 60):
        try:
            wall: datetime = walker.get_next(datetime)
        except CroniterBadDateError:  # stored before creation refused it: a schedule that never fires is over
            return NextOccurrence(None, tuple(skipped))
        placed = wall.replace(tzinfo=zone, fold=0)
        instant_ms = int(placed.timestamp() * 1000)
        if instant_ms <= after_ms:
            continue
        if placed.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None) != wall:
            skipped.append(SkippedTime(instant_ms, f"{wall:%Y-%m-%d %H:%M} does not exist in {tz_name} "
                                                   "(the clocks skip it: daylight saving time starts)"))
            if len(skipped) > MAX_GAP_STEPS:
                break
            continue
        return NextOccurrence(instant_ms, tuple(skipped))
    return NextOccurrence(None, tuple(skipped))


def period_ms(schedule: Mapping[str, Any], occurrence_at: int) -> int | None:
    """How far apart occurrences are around `occurrence_at` (None for a one-shot)."""
    if schedule["kind"] == INTERVAL:
        return int(schedule["everyMs"])
    if schedule["kind"] == CRON:
        following = next_occurrence(schedule, occurrence_at).due_at
        return None if following is None else following - occurrence_at
    return None


def grace_ms(period: int) -> int:
    """How late a missed occurrence may still run: half the period, clamped to [2 min, 2 h]."""
    return max(GRACE_MIN_MS, min(GRACE_MAX_MS, period // 2))


def describe(schedule: Mapping[str, Any] | None) -> str:
    if schedule is None:
        return "now"
    if schedule["kind"] == AT:
        return f"at {_iso(int(schedule['at']))}"
    if schedule["kind"] == INTERVAL:
        return f"every {int(schedule['everyMs']) // 1000}s"
    tz = f" ({schedule['tz']})" if schedule.get("tz") else " (UTC)"
    return f"cron {schedule['expression']}{tz}"


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="seconds")
