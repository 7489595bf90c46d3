"""Seed lists for the suites: `CHAOS_SEEDS=N` (default 60) plus each suite's fixed regressions."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import pytest

DEFAULT_SEEDS = 60


def seed_count(default: int = DEFAULT_SEEDS, env: str = "CHAOS_SEEDS") -> int:
    return int(os.environ.get(env, default))


def seed_params(regressions: Sequence[int], count: int | None = None,
                known_bugs: Mapping[int, str] | None = None) -> list[object]:
    """Every regression seed (marked, always run), then seeds 0..N-1; ids name the seed.

    A seed in `known_bugs` fails deterministically on an open product bug: it is an
    xfail naming that bug (not strict, so the fix shows up as XPASS, not as a failure)."""
    n = seed_count() if count is None else count
    bugs = known_bugs or {}

    def marks(s: int) -> object:
        return pytest.mark.xfail(strict=False, reason=bugs[s]) if s in bugs else ()

    params: list[object] = [pytest.param(s, id=f"regression-seed{s}", marks=marks(s)) for s in regressions]
    params += [pytest.param(s, id=f"seed{s}", marks=marks(s)) for s in range(n) if s not in regressions]
    return params
