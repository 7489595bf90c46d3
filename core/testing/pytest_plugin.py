"""pytest fixtures for plugin authors (installed as the `atomic_agent` pytest11 plugin).

- ``plugin_host``: a fresh host with only the core's hooks.
- ``register_plugin``: ``register_plugin(obj, name)`` adds an in-process plugin to that
  host and removes it when the test ends, pass or fail.
- ``agent_state_dir``: an empty state dir, also exported as ``ATOMIC_AGENT_STATE_DIR``.

The ``llama_server`` fixture (a real llama-server) belongs to the llama_server plugin and is
installed by its own pytest11 entry point (``atomic_agent.plugins.llama_server.testing.llama_fixture``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atomic_agent.plugin_host.plugin_host import PluginHost, PluginReport
from atomic_agent.testing.runtime_kit import fresh_plugin_host


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
