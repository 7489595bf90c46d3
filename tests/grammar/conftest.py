"""Fixtures for the grammar tests: the shared real llama-server fixture, when available."""

import pytest

try:
    from atomic_agent.testing.llama_fixture import llama_server  # noqa: F401
except ImportError:  # the shared fixture module is not in this tree yet

    @pytest.fixture
    def llama_server():  # type: ignore[no-redef]
        pytest.skip("atomic_agent.testing.llama_fixture is not available; the real llama-server fixture is needed")
