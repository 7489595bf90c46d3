from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sessions.session_backends import HARNESSES, OpenedBackend


@pytest.fixture(params=[pytest.param(h, id=h.name, marks=[getattr(pytest.mark, h.name)] if h.name == "postgresql" else [])
                        for h in HARNESSES])
def session_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenedBackend]:
    """Each backend on a fresh database; `open()` makes store objects, one per "process"."""
    opened = OpenedBackend(request.param, request.param.make(request), tmp_path)
    try:
        yield opened
    finally:
        opened.close_all()
