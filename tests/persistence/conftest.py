from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.persistence.store_harness import HARNESSES, StoreHarness


@pytest.fixture(params=sorted(HARNESSES))
async def harness(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreHarness]:
    made = HARNESSES[request.param](tmp_path)
    try:
        yield made
    finally:
        await made.close_all()
