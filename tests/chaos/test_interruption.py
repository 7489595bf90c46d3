"""Turns stopped and cancelled at random points, sometimes with a crash too."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import INTERRUPTION

# 473, 962, 1194, 1203 (CHAOS_SEEDS=2000 hunt): a cancel recorded just before a crash was
# read as a lost message — the driver now logs `cancel_asked` (harness bug, fixed).
# 1251: a stopped turn's steer handed back, then a crash right after the hand-back commit
# (fixed: the steer stays queued, marked handed back, until its caller re-sends it).
# 1186 (CHAOS_SEEDS=2000 hunt after the hand-back fix): a caller cancelled its queued turn
# just as a newer turn of the lane caught it up and ran it; the caller was told "withdrawn"
# while the message was answered (fixed: a caught-up turn's waiting caller hears its result).
REGRESSION_SEEDS: list[int] = [473, 962, 1186, 1194, 1203, 1251]


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_interruption_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, INTERRUPTION)
