"""The failure categories and their exception classes.

Every failure the agent loop surfaces (step_error, loop_failed, traces, metrics, host
protocols) carries exactly one of these categories. Tool-level errors that a tool
returns as a result, and loops the detector ends gracefully, are not failures at all.

Beyond the guide's five (transport, grammar, model, tool, cancelled) two say where a
failure came from when the five would mislead: `provider_timeout` (the provider was
reached but our own client stopped waiting for it — a slow server, never a user cancel)
and `storage` (the state directory could not be written or read: a full disk, a
read-only directory, a damaged database — never the tool the model called).
"""

from __future__ import annotations

from typing import Literal

FailureCategory = Literal["transport", "provider_timeout", "grammar", "model", "tool", "storage", "cancelled"]
FAILURE_CATEGORIES: tuple[FailureCategory, ...] = ("transport", "provider_timeout", "grammar", "model", "tool",
                                                   "storage", "cancelled")
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


class ProviderTimeoutError(TransportError):
    """Our own client gave up waiting for the provider (a read, write or pool timeout, or a
    stream that stalled mid-answer). The provider was reached, so it is neither a cancel nor
    "unreachable". Retry policy (the guide's transport rules): the bounded transport retry
    may repeat it only before any output streamed; the runtime does not retry the turn; the
    fallback chain counts it toward its threshold instead of switching at once. The turn
    fails with a failure note and its message stays in the session, so the next start (or
    the user's next message) answers it."""

    category: FailureCategory = "provider_timeout"
    timed_out = True  # what the fallback chain's "our own timeout" check reads

    def __init__(self, message: str, status: int | None = None, url: str | None = None,
                 timeout_s: float | None = None) -> None:
        super().__init__(message, status=status, url=url)
        self.timeout_s = timeout_s


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


class StorageError(LlmFailure):
    """The state directory refused a read or write the turn needed (disk full, read-only,
    permissions, a damaged database). Not the model's fault and not a tool's: the operator
    fixes the environment (`atomic-agent doctor` says how)."""

    category: FailureCategory = "storage"


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
