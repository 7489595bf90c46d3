"""Sends and steers, each accepted just before a crash: every one answered exactly once, in queue order."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import QUEUES

REGRESSION_SEEDS: list[int] = []


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_queues_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, QUEUES)
