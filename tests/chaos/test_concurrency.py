"""Nothing crashes: sends, steers, stops and compactions arrive at once across sessions."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import CONCURRENCY

REGRESSION_SEEDS: list[int] = []


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_concurrency_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, CONCURRENCY)
