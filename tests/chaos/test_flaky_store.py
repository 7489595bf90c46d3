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
# 151, 329, 850 (CHAOS_SEEDS=2000): steers to one turn out of send order — handed back in
# order, but the caller re-sent them side by side, the first re-send's admission was refused
# by the locked store and retried after the second was admitted (fixed in the driver: one
# re-send per session at a time; and the runtime requeues in order steers whose hand-back
# write or finalize the store refused).
# Which seeds hit it moves whenever the runtime's write sequence changes; the bug does not.
REGRESSION_SEEDS: list[int] = [25, 32, 150, 151, 329, 593, 641, 850]


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_flaky_store_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, FLAKY_STORE)
