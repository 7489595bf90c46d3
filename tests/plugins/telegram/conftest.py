from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_bot_api import FakeBotApi


@pytest.fixture
def bot_api() -> Iterator[FakeBotApi]:
    api = FakeBotApi().start()
    try:
        yield api
    finally:
        api.close()
