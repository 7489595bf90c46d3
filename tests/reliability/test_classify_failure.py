"""classify_failure: one mapping from raw errors onto the taxonomy's categories."""

from __future__ import annotations

import asyncio
import errno
import sqlite3

import pytest

from atomic_agent.llm.provider_protocol import ProviderError, ProviderUnavailableError
from atomic_agent.reliability.failure_taxonomy import (
    GrammarError,
    LlmFailure,
    ModelError,
    ProviderTimeoutError,
    StorageError,
    ToolExecutionError,
    TransportError,
    TurnCancelledError,
    classify_failure,
)
from atomic_agent.sessions.store_errors import SessionStoreFullError


class ToolCallParseError(ValueError):
    """Stands in for the parser's error, matched by class name."""

    def __init__(self, message: str, raw_preview: str) -> None:
        super().__init__(message)
        self.raw_preview = raw_preview


class StrictToolCallParseError(ToolCallParseError):
    pass


class PreviewCarrier(Exception):
    raw_preview = "[{\"tool\": "


URL = "http://127.0.0.1:8080/completion"


def test_classifier_is_single_source_of_truth() -> None:
    cases: list[tuple[BaseException, type[LlmFailure], str]] = [
        (ProviderError("connect failed", status=None, url=URL), TransportError, "transport"),
        (ProviderUnavailableError("refused", url=URL), TransportError, "transport"),
        (ProviderError("bad gateway", status=502, url=URL), TransportError, "transport"),
        (ProviderError("bad grammar", status=400, body="parse error at col 3"), GrammarError, "grammar"),
        (ProviderError("unauthorised", status=401), GrammarError, "grammar"),
        (ToolCallParseError("not JSON", raw_preview="{oops"), GrammarError, "grammar"),
        (StrictToolCallParseError("not JSON", raw_preview="{oops"), GrammarError, "grammar"),
        (PreviewCarrier("bad"), GrammarError, "grammar"),
        (asyncio.CancelledError(), TurnCancelledError, "cancelled"),
        (ProviderError("too slow", status=None, url=URL, timed_out=True), ProviderTimeoutError, "provider_timeout"),
        (SessionStoreFullError("disk full"), StorageError, "storage"),
        (sqlite3.DatabaseError("database disk image is malformed"), StorageError, "storage"),
        (OSError(errno.ENOSPC, "No space left on device"), StorageError, "storage"),
        (RuntimeError("request aborted by the client"), ToolExecutionError, "tool"),
        (KeyError("missing"), ToolExecutionError, "tool"),
    ]
    for err, cls, category in cases:
        failure = classify_failure(err)
        assert type(failure) is cls, err
        assert failure.category == category, err
        assert failure.__cause__ is err


def test_llm_failures_pass_through_unchanged() -> None:
    for failure in (TransportError("x", 503, URL), GrammarError("x", "raw"), ModelError("x", "empty"),
                    ToolExecutionError("x", "os.fs.read"), TurnCancelledError()):
        assert classify_failure(failure) is failure


def test_transport_keeps_status_and_url() -> None:
    failure = classify_failure(ProviderError("oops", status=500, url=URL))
    assert isinstance(failure, TransportError)
    assert failure.status == 500 and failure.url == URL
    assert URL in failure.message


def test_grammar_keeps_a_raw_preview() -> None:
    failure = classify_failure(ProviderError("rejected", status=400, body="x" * 5000))
    assert isinstance(failure, GrammarError)
    assert failure.raw_preview.startswith("xxx") and len(failure.raw_preview) <= 1001
    parsed = classify_failure(ToolCallParseError("bad", raw_preview="[{\"tool\":"))
    assert isinstance(parsed, GrammarError) and parsed.raw_preview == "[{\"tool\":"


def test_unknown_errors_are_tool_failures_naming_the_tool() -> None:
    failure = classify_failure(ZeroDivisionError("division by zero"), tool="os.fs.read")
    assert isinstance(failure, ToolExecutionError)
    assert failure.tool == "os.fs.read"
    assert "ZeroDivisionError" in failure.message and "os.fs.read" in failure.message


def test_cancellation_is_not_a_failure_category_mixup() -> None:
    # the turn's abort flag wins over whatever error the abort happened to surface as
    assert classify_failure(ProviderError("stream closed", status=None), cancelled=True).category == "cancelled"
    assert classify_failure(TransportError("x", None, URL), cancelled=True).category == "cancelled"
    assert classify_failure(KeyError("k"), cancelled=True).category == "cancelled"
    # a network failure whose text says "aborted" is still transport: status decides
    assert classify_failure(ProviderError("Connection aborted.", status=None)).category == "transport"
    # a cancelled turn is never counted as a tool or transport failure
    assert classify_failure(asyncio.CancelledError()).category not in {"tool", "transport"}


def test_a_cancellation_inside_an_exception_chain_is_not_a_cancel() -> None:
    """Nobody asked for this cancel: anyio implements httpx's timeouts by cancelling a scope,
    so a read timeout carries a CancelledError in its context. Only who asked decides."""
    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError as inner:
            raise ProviderError("read timed out", status=None, url=URL, timed_out=True) from inner
    except ProviderError as wrapped:
        assert classify_failure(wrapped).category == "provider_timeout"
    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError:
            raise RuntimeError("tool dispatch interrupted")  # noqa: B904 - the implicit context is the point
    except RuntimeError as chained:
        assert classify_failure(chained).category == "tool"


def test_message_words_never_decide_a_cancel() -> None:
    assert classify_failure(RuntimeError("the run was cancelled")).category == "tool"
    assert classify_failure(RuntimeError("request aborted by the client")).category == "tool"


def test_a_full_disk_under_a_wrapper_is_storage_not_tool() -> None:
    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError as inner:
            raise RuntimeError("could not record the tool result") from inner
    except RuntimeError as wrapped:
        assert classify_failure(wrapped, tool="os.fs.write").category == "storage"


@pytest.mark.parametrize("status", [301, 204])
def test_odd_provider_statuses_are_transport(status: int) -> None:
    assert classify_failure(ProviderError("odd", status=status)).category == "transport"
