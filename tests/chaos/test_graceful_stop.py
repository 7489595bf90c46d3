"""SIGTERM at random points under load, a graceful stop (drain or park), then a restart:
every acknowledged message is answered exactly once, as after a kill (tier (g))."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_run import explain
from tests.chaos.chaos_seeds import seed_params
from tests.chaos.graceful_stop_run import run_stop_seed
from tests.chaos.suite_specs import GRACEFUL_STOP

REGRESSION_SEEDS: list[int] = []


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_graceful_stop_keeps_every_promise(seed: int) -> None:
    outcome = run_stop_seed(seed, GRACEFUL_STOP)
    assert not outcome.violations, explain(outcome)
