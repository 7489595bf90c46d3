"""Tier (a): crash before and after EVERY commit of a fixed scenario, then again at every
write of the recovery that follows — SQLite's own I/O-error loop, applied to a runtime."""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from tests.chaos.chaos_run import RunOutcome, RunSpec, run_seed
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, FaultPlan
from tests.chaos.workload import SEND, STEER, STOP, Op

SPEC = RunSpec()
SCENARIOS: dict[str, list[Op]] = {
    # a tool batch (effect + durable read) and a follow-up queued behind it
    "send_then_queued_send": [Op(SEND, 0, "msg-0-0"), Op(SEND, 0, "msg-0-1")],
    # a steer accepted while the first turn runs
    "send_with_steer": [Op(SEND, 0, "msg-0-0", gap=6), Op(STEER, 0, "steer-0-0")],
    # a steer accepted, then the turn stopped before folding it in: the steer is handed back
    "steer_handed_back_by_stop": [Op(SEND, 0, "msg-0-0", gap=4), Op(STEER, 0, "steer-0-0"), Op(STOP, 0)],
    # two steers handed back by one stop, re-sent together (Hypothesis found the caller
    # re-queueing them in death order, not acceptance order, when both re-sends died)
    "two_steers_handed_back_and_resent": [Op(SEND, 0, "msg-0-1", gap=4), Op(STEER, 0, "steer-0-2", gap=1),
                                          Op(STOP, 0), Op(STEER, 0, "steer-0-3")],
}


@attrs.frozen
class CrashPoint:
    first: int
    where: str
    again: int | None = None  # a second crash at this write of the recovering life

    def plans(self) -> list[FaultPlan]:
        out = [FaultPlan(crash_at=self.first, where=self.where)]
        if self.again is not None:
            out.append(FaultPlan(crash_at=self.again, where=BEFORE_COMMIT))
        return out


def clean_writes(ops: list[Op], plans: list[FaultPlan] | None = None) -> RunOutcome:
    return run_seed(0, SPEC, plans=lambda _rng: plans or [FaultPlan()], ops=ops)


def crash_points(ops: list[Op], recovery_depth: int = 4) -> Iterator[CrashPoint]:
    """Every commit of a clean run, both sides; then (before commit only) each of the first
    `recovery_depth` writes of the life that recovers from it."""
    total = clean_writes(ops).commits
    for n in range(1, total + 1):
        for where in (BEFORE_COMMIT, AFTER_COMMIT):
            yield CrashPoint(n, where)
        for m in range(1, recovery_depth + 1):  # the recovery writes come first in the next life
            yield CrashPoint(n, AFTER_COMMIT, m)


def run_point(ops: list[Op], point: CrashPoint) -> RunOutcome:
    return run_seed(0, SPEC, plans=lambda _rng: point.plans(), ops=ops)
