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

import asyncio
import concurrent.futures
import errno
import sqlite3
from pathlib import Path
from typing import Literal

from atomic_agent.llm.provider_protocol import Completion, ProviderError
from atomic_agent.sessions.store_errors import SessionStoreError, SessionStoreFullError, SessionStoreLockedError

# Errors of the environment (the state directory), told apart and explained in one sentence.
#
# A command that meets a damaged database, a read-only directory or a full disk must say
# which of the three it is and what to do, never print a traceback: `explain_environment_error`
# is what the CLI prints, `is_lasting_store_failure` is what the lifecycle asks before it
# settles a turn that could not start (a lock is worth waiting out; damage is not).

DAMAGED_WORDS = ("malformed", "not a database", "corrupt", "disk i/o error")
READ_ONLY_WORDS = ("readonly", "read-only")
UNWRITABLE_WORDS = ("unable to open database", "permission denied")


def environment_kind(exc: BaseException) -> str | None:
    """"damaged" | "read_only" | "full" | "locked" | "unwritable" for a storage failure, else None."""
    if isinstance(exc, SessionStoreLockedError):
        return "locked"
    if isinstance(exc, SessionStoreFullError):
        return "full"
    if isinstance(exc, OSError):
        return {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read_only", errno.EACCES: "unwritable",
                errno.EPERM: "unwritable", errno.EIO: "damaged"}.get(exc.errno or 0)
    if isinstance(exc, (sqlite3.DatabaseError, SessionStoreError)):
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return "locked"
        if "full" in text:
            return "full"
        if any(word in text for word in READ_ONLY_WORDS):
            return "read_only"
        if any(word in text for word in UNWRITABLE_WORDS):
            return "unwritable"
        if any(word in text for word in DAMAGED_WORDS) or type(exc) is sqlite3.DatabaseError:
            return "damaged"
        return None
    return None


def is_lasting_store_failure(exc: BaseException) -> bool:
    """A failure that retrying soon will not cure (damage, a full or read-only disk)."""
    return environment_kind(exc) in ("damaged", "full", "read_only", "unwritable")


def explain_environment_error(exc: BaseException, state_dir: Path | None) -> str | None:
    """One paragraph for the user, or None when `exc` is not an environment error."""
    cause: BaseException | None = exc
    kind = None
    while cause is not None and kind is None:  # a typed store error may wrap the raw one
        kind = environment_kind(cause)
        cause = cause.__cause__ if kind is None else cause
    if kind is None:
        return None
    where = f"the state directory {state_dir}" if state_dir else "the state directory"
    detail = f"{type(exc).__name__}: {exc}"
    advice = {
        "damaged": f"a database in {where} is damaged ({detail}). Nothing more was written. Run `atomic-agent "
                   "doctor` to see which file; `atomic-agent doctor --move-aside <file>` keeps it as evidence and "
                   "the next command starts a fresh one (or restore a backup)",
        "full": f"the disk is full: the one holding {where} ({detail}). Nothing of the failed write was kept and everything "
                "accepted earlier is intact; free some space and run the command again",
        "read_only": f"{where} is read-only ({detail}). Nothing was written; make it writable (or pass a "
                     "writable --state-dir) and run the command again",
        "unwritable": f"{where} cannot be written by this user ({detail}). Nothing was written; fix its "
                      "permissions and run the command again",
        "locked": f"a database in {where} is locked by another atomic-agent process ({detail}); nothing was "
                  "written. Retry when it is idle",
    }[kind]
    return f"atomic-agent: {advice}."


# classify_failure: the one place raw exceptions are mapped onto the failure taxonomy.
#
# Order of decisions (first match wins):
# 1. A `TurnCancelledError` passes through. Otherwise a failure is "cancelled" only when
#    someone asked for it: the caller says so (`cancelled=True`, the turn's own abort flag
#    set by the user or the runtime) or the error *is* a task cancellation (the runtime
#    cancelled the turn's task). What an exception chain contains never decides it: httpx
#    and anyio implement their timeouts by cancelling a scope internally, so a read timeout
#    carries a `CancelledError` in its `__context__` — reading that as a user cancel drops
#    the message with no note.
# 2. Any other `LlmFailure` passes through unchanged.
# 3. `ProviderError`: our own client timed out (`timed_out`) -> "provider_timeout"; status
#    None (network) or >= 500 -> "transport"; 4xx -> "grammar" (the server rejected the
#    request or the grammar); any other status is a broken exchange, so "transport" too.
#    An httpx timeout that escaped unwrapped is matched by class name the same way. The
#    HTTP status decides, never the message text.
# 4. The state directory refused a read or write (a full disk, a read-only or unwritable
#    directory, a damaged database: `SessionStoreError`, `sqlite3.DatabaseError`, an
#    `OSError` such as ENOSPC/EROFS/EACCES, anywhere in the explicit cause chain) ->
#    "storage", never "tool".
# 5. A tool-call parse error (class named `ToolCallParseError`, or any error carrying
#    `raw_preview`) -> "grammar".
# 6. Fallback -> "tool". Provider code raises `ProviderError` and parsing raises parse
#    errors, so an untyped exception reaching the loop escaped the tool dispatch path (or
#    the glue around it); the guide files those under "tool". The tool name is attached
#    when the caller knows it.

PARSE_ERROR_CLASS_NAME = "ToolCallParseError"
_CANCEL_TYPES = (asyncio.CancelledError, concurrent.futures.CancelledError)
# httpx's timeouts by name (the core does not import httpx); ConnectTimeout is "unreachable"
HTTPX_TIMEOUT_NAMES = frozenset({"ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException"})
HTTPX_UNREACHABLE_NAMES = frozenset({"ConnectTimeout", "ConnectError"})
STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.EDQUOT, errno.EIO})


def is_cancellation(err: BaseException) -> bool:
    """True when `err` itself is an asyncio / futures cancellation (the task was cancelled).
    A cancellation buried in the chain of another error is an implementation detail of
    whoever raised that error (a timeout), not a request to stop."""
    return isinstance(err, _CANCEL_TYPES)


def is_parse_error(err: BaseException) -> bool:
    """True for tool-call parse errors, matched by class name so this module need not
    import the parser (any subclass of a `ToolCallParseError` counts)."""
    return (any(cls.__name__ == PARSE_ERROR_CLASS_NAME for cls in type(err).__mro__)
            or hasattr(err, "raw_preview"))


def _explicit_causes(err: BaseException) -> list[BaseException]:
    """`err` and what it was raised `from` (explicit causes only, never the context)."""
    chain: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__
    return chain


def storage_failure_of(err: BaseException) -> BaseException | None:
    """The error in `err`'s explicit cause chain that says the state directory refused a
    read or write, or None."""
    for e in _explicit_causes(err):
        if isinstance(e, (SessionStoreError, sqlite3.DatabaseError)):
            return e
        if isinstance(e, OSError) and e.errno in STORAGE_ERRNOS:
            return e
    return None


def _describe(err: BaseException) -> str:
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _from_provider(err: ProviderError) -> LlmFailure:
    status = err.status
    where = f" at {err.url}" if err.url else ""
    if getattr(err, "timed_out", False):
        return ProviderTimeoutError(f"the model server{where} was too slow: {err}", status=status, url=err.url)
    if status is not None and 400 <= status < 500:
        raw = err.body if err.body is not None else str(err)
        return GrammarError(f"provider rejected the request (HTTP {status}): {err}",
                            raw_preview=raw if isinstance(raw, str) else repr(raw))
    what = "network failure" if status is None else f"HTTP {status}"
    return TransportError(f"provider request failed{where} ({what}): {err}", status=status, url=err.url)


def classify_failure(err: BaseException, *, cancelled: bool = False, tool: str | None = None) -> LlmFailure:
    """The taxonomy member for `err` (see the module docstring for the rules).

    `cancelled` is the turn's own abort flag; `tool` names the tool being dispatched
    when the error escaped from there. The original error is kept as `__cause__`.
    """
    if isinstance(err, TurnCancelledError):
        return err
    if cancelled or is_cancellation(err):
        failure: LlmFailure = TurnCancelledError("turn cancelled")
    elif isinstance(err, LlmFailure):
        return err
    elif isinstance(err, ProviderError):
        failure = _from_provider(err)
    elif type(err).__name__ in HTTPX_TIMEOUT_NAMES:
        failure = ProviderTimeoutError(f"the model server was too slow: {_describe(err)}")
    elif type(err).__name__ in HTTPX_UNREACHABLE_NAMES:
        failure = TransportError(f"provider request failed (network failure): {_describe(err)}")
    elif (storage := storage_failure_of(err)) is not None:
        failure = StorageError(f"the state directory refused a write or read: {_describe(storage)}")
    elif is_parse_error(err):
        failure = GrammarError(f"could not parse the tool call: {err}",
                               raw_preview=str(getattr(err, "raw_preview", "") or ""))
    else:
        where = f" in {tool}" if tool else ""
        failure = ToolExecutionError(f"unexpected error{where}: {_describe(err)}", tool=tool)
    failure.__cause__ = err
    return failure


# Recognise completions that are unusable in themselves (truncated, empty, unstopped).

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

