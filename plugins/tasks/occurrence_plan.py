"""What a due task does at `now`: which occurrence runs, which are recorded as skipped.

The missed-occurrence contract: every occurrence of a schedule runs once or is recorded as
skipped with a reason. After downtime a recurring task's backlog collapses into one
catch-up run — its latest missed occurrence, if that is still within the grace window
(half the period, clamped to [2 min, 2 h]); the older ones, and the latest too when it is
older than the grace, are recorded as skipped. A one-shot is an obligation, so it runs
however late it is. A retry of an occurrence runs that occurrence again.
"""

from __future__ import annotations

import attrs

from .task_records import TaskRecord
from .task_schedule import grace_ms, next_occurrence, period_ms

MAX_WALK = 10_000  # occurrences walked one by one before jumping (a 1 s interval after a week down)
MISSED = "missed: the agent was not running at its time"
TOO_LATE = "missed: found {late_s}s late, past the grace window of {grace_s}s"


@attrs.frozen
class SkippedBlock:
    first_at: int  # the first occurrence of the block
    count: int
    reason: str


@attrs.frozen
class ClaimPlan:
    run_occurrence: int | None  # the occurrence to run now, or None
    skipped: tuple[SkippedBlock, ...] = ()
    rearm_due: int | None = None  # when nothing runs now: the next occurrence (None: nothing left)


def plan_claim(task: TaskRecord, now: int) -> ClaimPlan:
    occurrence = task.occurrence_at if task.occurrence_at is not None else task.due_at
    assert occurrence is not None
    if task.attempts > 0 or not task.recurring or task.schedule is None:
        return ClaimPlan(occurrence)
    schedule = task.schedule
    skipped: list[SkippedBlock] = []
    latest, behind = occurrence, 0
    first_behind = occurrence
    walked = 0
    while True:
        following = next_occurrence(schedule, latest)
        for gap in following.skipped:  # a time the zone skipped is recorded once the clock passed it
            if gap.occurrence_at <= now:
                skipped.append(SkippedBlock(gap.occurrence_at, 1, gap.reason))
        if following.due_at is None or following.due_at > now:
            break
        behind += 1
        latest = following.due_at
        walked += 1
        if walked >= MAX_WALK:  # jump close to now; the count stays exact for intervals only
            step_ms = period_ms(schedule, latest) or 1
            jump = next_occurrence(schedule, now - 2 * step_ms)
            if jump.due_at is not None and jump.due_at > latest:
                behind += max(0, (jump.due_at - latest) // step_ms - 1)
                latest = jump.due_at
            walked = 0
    if behind:
        skipped.append(SkippedBlock(first_behind, behind, MISSED))
    period = period_ms(schedule, latest)
    late = now - latest
    if period is None or late <= grace_ms(period):
        return ClaimPlan(latest, tuple(skipped))
    skipped.append(SkippedBlock(latest, 1, TOO_LATE.format(late_s=late // 1000, grace_s=grace_ms(period) // 1000)))
    after = next_occurrence(schedule, max(now, latest))
    for gap in after.skipped:
        skipped.append(SkippedBlock(gap.occurrence_at, 1, gap.reason))
    return ClaimPlan(None, tuple(skipped), after.due_at)
