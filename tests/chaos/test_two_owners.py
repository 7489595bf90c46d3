"""Two live owners on one store: two Runtimes over one state dir in one process, taking
sends and steers for the same sessions at once; either may die; then a last life drains."""

from __future__ import annotations

import pytest

from tests.chaos.chaos_seeds import seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import TWO_OWNERS

# Known product gap (found by this suite): each process has its own TurnController and
# TurnLedger.start does not look for a live turn of the lane held by another owner, so two
# owners run two turns of one session at once: FIFO breaks, transcripts interleave, and both
# models act on the same unanswered message (seed 58: one side effect runs twice).
# Not strict: the seeds that happen not to overlap pass. Remove once lanes are serialised.
pytestmark = pytest.mark.xfail(reason="a session's lane is serialised only inside one process", strict=False)

REGRESSION_SEEDS: list[int] = [1, 2, 5, 14, 58]


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_two_live_owners_answer_each_message_once_in_order(seed: int) -> None:
    assert_seed_holds(seed, TWO_OWNERS)
