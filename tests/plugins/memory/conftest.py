from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase


@pytest.fixture
def database(tmp_path: Path) -> Iterator[MemoryDatabase]:
    db = MemoryDatabase.open(tmp_path / "memory.sqlite")
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The memory clock reads from this list's last element (epoch ms); append to move it."""
    from atomic_agent.storage import store_clock

    now = [1_700_000_000_000]
    monkeypatch.setattr(store_clock, "now_ms", lambda: now[-1])
    return now
