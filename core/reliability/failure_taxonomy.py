"""The five failure categories and their exception classes.

Every failure the agent loop surfaces (step_error, loop_failed, traces, metrics, host
protocols) carries exactly one of these categories. Tool-level errors that a tool
returns as a result, and loops the detector ends gracefully, are not failures at all.
"""

from __future__ import annotations

from typing import Literal

FailureCategory = Literal["transport", "grammar", "model", "tool", "cancelled"]
FAILURE_CATEGORIES: tuple[FailureCategory, ...] = ("transport", "grammar", "model", "tool", "cancelled")
ModelFailureReason = Literal["truncated", "empty", "no_stop"]
MODEL_FAILURE_REASONS: tuple[ModelFailureReason, ...] = ("truncated", "empty", "no_stop")

RAW_PREVIEW_CHARS = 1000  # enough to diagnose a bad completion without replaying it


def preview(raw: object) -> str:
    """At most `RAW_PREVIEW_CHARS` of `raw` as text ("" for None)."""
    if raw is None:
        return ""
    text = raw if isinstance(raw, str) else str(raw)
    return text if len(text) <= RAW_PREVIEW_CHARS else text[:RAW_PREVIEW_CHARS] + "…"


class LlmFailure(Exception):
    """Base of the taxonomy. `category` is fixed per subclass."""

    category: FailureCategory = "tool"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class TransportError(LlmFailure):
    """The provider could not be reached or answered 5xx, after its own retries ran out.
    The runtime does not retry again."""

    category: FailureCategory = "transport"

    def __init__(self, message: str, status: int | None = None, url: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.url = url


class GrammarError(LlmFailure):
    """The provider rejected the request (4xx) or the output failed to parse even after
    the one-shot parser retry. `raw_preview` holds the start of the offending text."""

    category: FailureCategory = "grammar"

    def __init__(self, message: str, raw_preview: str = "") -> None:
        super().__init__(message)
        self.raw_preview = preview(raw_preview)


class ModelError(LlmFailure):
    """The completion itself is unusable (truncated, empty, never stopped). Never
    retried in place: the same prompt would hit the same wall."""

    category: FailureCategory = "model"

    def __init__(self, message: str, reason: ModelFailureReason, raw_preview: str = "") -> None:
        if reason not in MODEL_FAILURE_REASONS:
            raise ValueError(f"ModelError reason must be one of {', '.join(MODEL_FAILURE_REASONS)}, "
                             f"got {reason!r}")
        super().__init__(message)
        self.reason = reason
        self.raw_preview = preview(raw_preview)


class ToolExecutionError(LlmFailure):
    """A tool is missing from the registry, or an unexpected error escaped dispatch.
    Ordinary tool failures are results with status "error" and never become this."""

    category: FailureCategory = "tool"

    def __init__(self, message: str, tool: str | None = None) -> None:
        super().__init__(message)
        self.tool = tool


class TurnCancelledError(LlmFailure):
    """The turn was cancelled; it closes with status cancelled, not failed."""

    category: FailureCategory = "cancelled"

    def __init__(self, message: str = "turn cancelled") -> None:
        super().__init__(message)


def _check_category(category: str) -> str:
    if category not in FAILURE_CATEGORIES:
        raise ValueError(f"unknown failure category {category!r}; use one of {', '.join(FAILURE_CATEGORIES)}")
    return category


def error_code(category: str) -> str:
    """The sidecar's `error.code` for a failure: `step_error:<category>`."""
    return f"step_error:{_check_category(category)}"


def openai_error_type(category: str) -> str:
    """The OpenAI-compatible `error.type` for a failure: `agent.<category>`."""
    return f"agent.{_check_category(category)}"
