"""The categories and their host-surface names."""

from __future__ import annotations

import pytest

from atomic_agent.reliability.failure_taxonomy import (
    FAILURE_CATEGORIES,
    GrammarError,
    LlmFailure,
    ModelError,
    ProviderTimeoutError,
    StorageError,
    ToolExecutionError,
    TransportError,
    TurnCancelledError,
    error_code,
)


def test_categories_are_the_guides_five_plus_timeout_and_storage() -> None:
    assert set(FAILURE_CATEGORIES) == {"transport", "provider_timeout", "grammar", "model", "tool", "storage",
                                       "cancelled"}
    classes = [TransportError, ProviderTimeoutError, GrammarError, ModelError, ToolExecutionError, StorageError,
               TurnCancelledError]
    assert [cls.category for cls in classes] == ["transport", "provider_timeout", "grammar", "model", "tool",
                                                 "storage", "cancelled"]
    assert issubclass(ProviderTimeoutError, TransportError)  # the transport retry rules apply to it
    assert all(issubclass(cls, LlmFailure) and issubclass(cls, Exception) for cls in classes)


def test_failures_carry_their_postmortem_fields() -> None:
    t = TransportError("down", status=503, url="http://127.0.0.1:1")
    assert (t.status, t.url, str(t)) == (503, "http://127.0.0.1:1", "down")
    assert GrammarError("bad", raw_preview="[{").raw_preview == "[{"
    m = ModelError("cut off", reason="truncated", raw_preview="[{\"to")
    assert (m.reason, m.raw_preview) == ("truncated", "[{\"to")
    assert ToolExecutionError("missing", tool="os.nope").tool == "os.nope"
    assert TurnCancelledError().message == "turn cancelled"


def test_model_error_refuses_unknown_reasons() -> None:
    with pytest.raises(ValueError, match="truncated, empty, no_stop"):
        ModelError("x", reason="weird")  # type: ignore[arg-type]


def test_host_surface_codes() -> None:
    assert error_code("grammar") == "step_error:grammar"
    with pytest.raises(ValueError, match="unknown failure category"):
        error_code("network")
