"""Seed lists for the suites: `CHAOS_SEEDS=N` (default 60) plus each suite's fixed regressions."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

DEFAULT_SEEDS = 60


def seed_count(default: int = DEFAULT_SEEDS, env: str = "CHAOS_SEEDS") -> int:
    return int(os.environ.get(env, default))


def seed_params(regressions: Sequence[int], count: int | None = None) -> list[object]:
    """Every regression seed (marked, always run), then seeds 0..N-1; ids name the seed."""
    n = seed_count() if count is None else count
    params: list[object] = [pytest.param(s, id=f"regression-seed{s}") for s in regressions]
    params += [pytest.param(s, id=f"seed{s}") for s in range(n) if s not in regressions]
    return params
