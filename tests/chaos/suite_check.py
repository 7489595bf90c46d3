"""The assertion every seeded suite ends with: a readable report naming the seed."""

from __future__ import annotations

from atomic_agent.sessions.store_errors import SessionStoreError
from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_run import RunSpec, explain, run_seed


def assert_seed_holds(seed: int, spec: RunSpec, database: ChaosDatabase | None = None) -> None:
    outcome = run_seed(seed, spec, expected=(SessionStoreError,) if spec.flaky else (), database=database)
    assert not outcome.violations, explain(outcome)
