"""Golden files: a test compares bytes it builds with a file kept in the repository.

A missing golden file fails the test (deleting one must never make its test pass). Write
or refresh them only on purpose, with `ATOMIC_AGENT_REGENERATE_GOLDENS=1`, and review the
diff like any other change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REGENERATE_ENV = "ATOMIC_AGENT_REGENERATE_GOLDENS"


def regenerating() -> bool:
    return os.environ.get(REGENERATE_ENV) == "1"


def assert_matches_golden(golden: Path, actual: str) -> None:
    if regenerating():
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(actual, encoding="utf-8")
        return
    if not golden.is_file():
        pytest.fail(f"golden file {golden} is missing; regenerate it with {REGENERATE_ENV}=1 and review the diff",
                    pytrace=False)
    assert actual == golden.read_text(encoding="utf-8"), f"differs from {golden}"
