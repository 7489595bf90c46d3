"""Fixtures for the grammar tests: the shared real llama-server (session-scoped)."""

from atomic_agent.testing.llama_fixture import llama_server  # noqa: F401
