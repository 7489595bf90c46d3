from __future__ import annotations

import itertools
import types

import pytest


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The memory stores' clock (epoch ms) reads the last element of this list."""
    from atomic_agent.storage import store_clock

    now = [1_700_000_000_000]
    monkeypatch.setattr(store_clock, "now_ms", lambda: now[-1])
    return now


@pytest.fixture
def deterministic_session_ids(monkeypatch: pytest.MonkeyPatch):
    """Session ids s000000000001, s000000000002, ... restarting whenever `reset()` is called."""
    from atomic_agent.sessions import session_store

    state = {"counter": itertools.count(1)}

    def uuid4() -> object:
        return types.SimpleNamespace(hex=f"s{next(state['counter']):011d}" + "0" * 20)

    monkeypatch.setattr(session_store, "uuid", types.SimpleNamespace(uuid4=uuid4))

    def reset() -> None:
        state["counter"] = itertools.count(1)

    return reset
