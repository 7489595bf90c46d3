"""Compaction with messages waiting in both queues and calls in flight, crashing around it."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import COMPACTION_UNDER_LOAD

REGRESSION_SEEDS: list[int] = []


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_compaction_under_load_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, COMPACTION_UNDER_LOAD)
