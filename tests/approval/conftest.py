from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.approval.approval_backends import BACKENDS, ApprovalBackend


@pytest.fixture(params=BACKENDS)
def approval_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApprovalBackend]:
    """The approval records on each backend; `open()` is another process's (host's) view."""
    database = request.getfixturevalue("postgresql_database") if request.param == "postgresql" else None
    backend = ApprovalBackend(request.param, tmp_path, database)
    try:
        yield backend
    finally:
        backend.close()
