"""Tier (d): Hypothesis chooses the workload and the crash schedule rule by rule, then the
run is played and checked; a failure shrinks to the fewest sends, steers and crashes.

A crash lands either at the N-th write of a life, or at the N-th write of one kind —
an admission, a steer becoming a user row, a steer leaving its queue, a steer handed back
at its turn's end — just before or
just after its COMMIT: the promises most likely to break hide at exactly those writes,
and a blind index rarely hits them."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from tests.chaos.chaos_run import RunSpec, explain, run_seed
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, WRITE_KINDS, FaultPlan
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

    @rule(s=st.integers(0, SESSIONS - 1), lead=st.integers(4, 10), gap=st.integers(0, 8))
    def send_and_steer(self, s: int, lead: int, gap: int) -> None:
        """A send, then a steer once its turn is running (after `lead` loop turns), so the
        steer is folded in at a step boundary rather than refused."""
        self.ops.append(Op(SEND, s, self._text("msg", s), lead))
        self.ops.append(Op(STEER, s, self._text("steer", s), gap))

    @rule(s=st.integers(0, SESSIONS - 1))
    def stop(self, s: int) -> None:
        self.ops.append(Op(STOP, s))

    @rule(at=st.integers(1, 40), after=st.booleans())
    def crash(self, at: int, after: bool) -> None:
        self.plans.append(FaultPlan(crash_at=at, where=AFTER_COMMIT if after else BEFORE_COMMIT))

    @initialize(kind=st.sampled_from((None, *WRITE_KINDS)), nth=st.integers(1, 2), after=st.booleans())
    def first_crash_at_write_of(self, kind: str | None, nth: int, after: bool) -> None:
        """The first life dies at a write of one kind (None: it is not aimed)."""
        if kind is not None:
            self.crash_at_write_of(kind, nth, after)

    @rule(kind=st.sampled_from(WRITE_KINDS), nth=st.integers(1, 2), after=st.booleans())
    def crash_at_write_of(self, kind: str, nth: int, after: bool) -> None:
        self.plans.append(FaultPlan(crash_at=nth, where=AFTER_COMMIT if after else BEFORE_COMMIT, target=kind))

    def teardown(self) -> None:
        if not self.ops:
            return
        plans = [FaultPlan(crash_at=p.crash_at, where=p.where, target=p.target) for p in self.plans] or [FaultPlan()]
        outcome = run_seed(0, RunSpec(), plans=lambda _rng: plans, ops=self.ops)
        assert not outcome.violations, explain(outcome)

