"""Tier (d): Hypothesis chooses the workload and the crash schedule rule by rule, then the
run is played and checked; a failure shrinks to the fewest sends, steers and crashes."""

from __future__ import annotations

import random

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from tests.chaos.chaos_run import RunSpec, explain, run_seed
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, FaultPlan
from tests.chaos.workload import SEND, STEER, STOP, Op

SESSIONS = 2


class ChaosMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.ops: list[Op] = []
        self.plans: list[FaultPlan] = []
        self.counter = 0

    def _text(self, kind: str, s: int) -> str:
        self.counter += 1
        return f"{kind}-{s}-{self.counter}"

    @rule(s=st.integers(0, SESSIONS - 1), gap=st.integers(0, 8))
    def send(self, s: int, gap: int) -> None:
        self.ops.append(Op(SEND, s, self._text("msg", s), gap))

    @rule(s=st.integers(0, SESSIONS - 1), gap=st.integers(0, 8))
    def steer(self, s: int, gap: int) -> None:
        self.ops.append(Op(STEER, s, self._text("steer", s), gap))

    @rule(s=st.integers(0, SESSIONS - 1))
    def stop(self, s: int) -> None:
        self.ops.append(Op(STOP, s))

    @rule(at=st.integers(1, 40), after=st.booleans())
    def crash(self, at: int, after: bool) -> None:
        self.plans.append(FaultPlan(crash_at=at, where=AFTER_COMMIT if after else BEFORE_COMMIT))

    def teardown(self) -> None:
        if not self.ops:
            return
        plans = [FaultPlan(crash_at=p.crash_at, where=p.where) for p in self.plans] or [FaultPlan()]
        outcome = run_seed(0, RunSpec(), plans=lambda _rng: plans, ops=self.ops)
        assert not outcome.violations, explain(outcome)


def machine_random() -> random.Random:
    return random.Random(0)
