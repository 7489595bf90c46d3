"""The harness proves itself: each deliberate bug behind ATOMIC_AGENT_CHAOS_MUTANT is caught
by every tier that should catch it, within that tier's default budget."""

from __future__ import annotations

import pytest

from atomic_agent.testing.chaos_mutants import ENV

from tests.chaos.chaos_run import run_seed
from tests.chaos.exhaustive import SCENARIOS, crash_points, run_point
from tests.chaos.mutant_hunt import first_catch
from tests.chaos.suite_specs import CRASH_RECOVERY, QUEUES

SEEDED = {"ack_before_commit": CRASH_RECOVERY, "rerun_non_durable": CRASH_RECOVERY, "split_claim": QUEUES}
EXHAUSTIVE = {"ack_before_commit": "send_then_queued_send", "rerun_non_durable": "send_then_queued_send",
              "split_claim": "send_with_steer"}


@pytest.mark.parametrize("mutant", sorted(SEEDED))
def test_seeded_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, mutant)
    spec = SEEDED[mutant]
    assert first_catch(mutant, (lambda s=s: run_seed(s, spec) for s in range(60))) is not None


@pytest.mark.parametrize("mutant", sorted(EXHAUSTIVE))
def test_exhaustive_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ops = SCENARIOS[EXHAUSTIVE[mutant]]
    points = list(crash_points(ops))  # counted with the mutant off: the clean run's commits
    monkeypatch.setenv(ENV, mutant)
    assert first_catch(mutant, (lambda p=p: run_point(ops, p) for p in points)) is not None


def test_mutants_are_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert run_seed(0, CRASH_RECOVERY).violations == []
