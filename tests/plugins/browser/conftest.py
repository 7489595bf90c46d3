"""Browser tests drive the system Chromium (scripts/system-packages.txt installs it)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from .browser_kit import PageServer


@pytest.fixture()
def pages() -> Iterator[PageServer]:
    if shutil.which("chromium") is None:
        pytest.fail("the system Chromium is missing: run ./scripts/system-packages (Debian package chromium)")
    with PageServer() as server:
        yield server
