"""Writes fail with OperationalError and the process keeps running: it must cope and lose nothing acknowledged."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import FLAKY_STORE

# 25: a turn whose start failed is skipped and answered out of order; 32: a failed turn whose
# settle also failed keeps unanswered calls. 150, 593, 641 (of 16 alike in a CHAOS_SEEDS=2000
# hunt): a steer handed back by a caught-up turn was lost (fixed: handed-back steers stay
# queued until re-sent, and a turn nobody waits on requeues them).
# Which seeds hit it moves whenever the runtime's write sequence changes; the bug does not.
REGRESSION_SEEDS: list[int] = [25, 32, 150, 593, 641]


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_flaky_store_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, FLAKY_STORE)
