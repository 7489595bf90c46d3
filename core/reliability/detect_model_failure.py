"""Recognise completions that are unusable in themselves (truncated, empty, unstopped)."""

from __future__ import annotations

from atomic_agent.llm.completion import Completion
from atomic_agent.reliability.failure_taxonomy import ModelError, ModelFailureReason

_MESSAGES: dict[str, str] = {
    "truncated": "the completion hit the token limit before it finished",
    "empty": "the completion contained no text",
    "no_stop": "the completion ended without a stop",
}


def detect_model_failure(completion: Completion) -> ModelFailureReason | None:
    """The reason `completion` cannot be used, or None when it can.

    Checked in order: "truncated" (stop_type "limit" or truncated set), "empty" (no
    non-whitespace content; reasoning text alone does not count), "no_stop" (stop false).
    """
    if completion.stop_type == "limit" or completion.truncated:
        return "truncated"
    if not completion.content.strip():
        return "empty"
    if not completion.stop:
        return "no_stop"
    return None


def model_error_for(completion: Completion) -> ModelError | None:
    """A `ModelError` describing `completion`'s failure, or None when it is usable."""
    reason = detect_model_failure(completion)
    if reason is None:
        return None
    message = f"{_MESSAGES[reason]} ({completion.tokens_predicted} tokens predicted)"
    return ModelError(message, reason, raw_preview=completion.content)
