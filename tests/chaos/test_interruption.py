"""Turns stopped and cancelled at random points, sometimes with a crash too."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import INTERRUPTION

REGRESSION_SEEDS: list[int] = []


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_interruption_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, INTERRUPTION)
