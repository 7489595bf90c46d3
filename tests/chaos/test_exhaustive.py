"""Tier (a): every crash point of fixed scenarios, and a second crash inside each recovery."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_run import explain
from tests.chaos.exhaustive import SCENARIOS, clean_writes, crash_points, run_point


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_commit_survives_a_crash_before_and_after_it(name: str) -> None:
    ops = SCENARIOS[name]
    assert clean_writes(ops).violations == []
    failures = []
    for point in crash_points(ops):
        outcome = run_point(ops, point)
        if outcome.violations:
            failures.append(f"{point}: {explain(outcome)}")
    assert not failures, f"{len(failures)} crash points broke a promise:\n" + "\n".join(failures[:3])
