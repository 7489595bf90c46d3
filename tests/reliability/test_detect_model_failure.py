"""detect_model_failure: truncated, empty and unstopped completions."""

from __future__ import annotations

from atomic_agent.llm.provider_protocol import Completion
from atomic_agent.reliability.failure_taxonomy import detect_model_failure, model_error_for

GOOD = '[{"tool": "reply", "args": {"text": "hi"}}]'


def test_a_normal_completion_is_not_a_failure() -> None:
    assert detect_model_failure(Completion(GOOD)) is None
    assert model_error_for(Completion(GOOD)) is None


def test_token_limit_is_truncated() -> None:
    assert detect_model_failure(Completion(GOOD, stop_type="limit")) == "truncated"
    assert detect_model_failure(Completion(GOOD, truncated=True)) == "truncated"
    assert detect_model_failure(Completion("", stop_type="limit", stop=False)) == "truncated"


def test_whitespace_only_is_empty() -> None:
    assert detect_model_failure(Completion(" \n\t")) == "empty"
    assert detect_model_failure(Completion("", reasoning_content="thinking...")) == "empty"


def test_missing_stop_is_no_stop() -> None:
    assert detect_model_failure(Completion(GOOD, stop=False, stop_type="none")) == "no_stop"


def test_model_error_carries_reason_and_preview() -> None:
    err = model_error_for(Completion('[{"tool": "re', stop_type="limit", tokens_predicted=512))
    assert err is not None and err.category == "model"
    assert err.reason == "truncated" and err.raw_preview == '[{"tool": "re'
    assert "512" in err.message
