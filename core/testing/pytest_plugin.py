"""pytest fixtures for plugin authors (installed as the `atomic_agent` pytest11 plugin).

- ``plugin_host``: a fresh host with only the core's hooks.
- ``register_plugin``: ``register_plugin(obj, name)`` adds an in-process plugin to that
  host and removes it when the test ends, pass or fail.
- ``agent_state_dir``: an empty state dir, also exported as ``ATOMIC_AGENT_STATE_DIR``.
- ``llama_server``: a real llama-server with the starter model (session scope; builds
  or reuses the cached binary and fails loudly when it cannot).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.plugin_host.plugin_report import PluginReport
# the fixture and its marker hooks, registered once for the whole run: a conftest importing
# `llama_server` again would define a second session fixture and start a second server
from atomic_agent.testing.llama_fixture import llama_server  # noqa: F401  (re-exported fixture)
from atomic_agent.testing.llama_fixture import pytest_collection_modifyitems, pytest_configure  # noqa: F401
from atomic_agent.testing.plugin_kit import fresh_plugin_host


@pytest.fixture
def plugin_host() -> PluginHost:
    return fresh_plugin_host()


@pytest.fixture
def register_plugin(plugin_host: PluginHost) -> Iterator[Callable[[object, str], PluginReport]]:
    names: list[str] = []

    def register(plugin: object, name: str) -> PluginReport:
        names.append(name)
        return plugin_host.register(plugin, name)

    try:
        yield register
    finally:
        for name in names:
            plugin_host.unregister(name)


@pytest.fixture
def agent_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("ATOMIC_AGENT_STATE_DIR", str(state))
    return state
