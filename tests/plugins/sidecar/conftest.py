from atomic_agent.testing.llama_fixture import llama_server  # noqa: F401
from atomic_agent.testing.llama_fixture import pytest_collection_modifyitems, pytest_configure  # noqa: F401
