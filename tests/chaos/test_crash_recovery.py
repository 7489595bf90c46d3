"""The process dies at a random write, again and again, until a last life is left alone to finish;
also with the session state in PostgreSQL (issue 37), CHAOS_PG_SEEDS (default 4) seeds."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_seeds import seed_count, seed_params
from tests.chaos.suite_check import assert_seed_holds
from tests.chaos.suite_specs import CRASH_RECOVERY

REGRESSION_SEEDS: list[int] = [9]  # 9: a crash between interrupting a turn and settling its calls leaves them unanswered for good


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS))
def test_crash_recovery_keeps_every_promise(seed: int) -> None:
    assert_seed_holds(seed, CRASH_RECOVERY)


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS, seed_count(4, "CHAOS_PG_SEEDS")))
def test_crash_recovery_on_postgresql_keeps_every_promise(seed: int, postgresql_database: Any) -> None:
    # a PostgreSQL admission is acknowledged once its WAL flush returns from a thread
    # (pg_unit_of_work), so two overlapping sends may be acknowledged in either order: FIFO is
    # checked as a caller can observe it (a send begun after an acknowledgement runs after it)
    spec = attrs.evolve(CRASH_RECOVERY, fifo="after_acknowledgement")
    assert_seed_holds(seed, spec, ChaosDatabase.of(postgresql_database))
