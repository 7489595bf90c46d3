"""classify_failure: the one place raw exceptions are mapped onto the failure taxonomy.

Order of decisions (first match wins):
1. A `TurnCancelledError` passes through. Otherwise a failure is "cancelled" only when
   someone asked for it: the caller says so (`cancelled=True`, the turn's own abort flag
   set by the user or the runtime) or the error *is* a task cancellation (the runtime
   cancelled the turn's task). What an exception chain contains never decides it: httpx
   and anyio implement their timeouts by cancelling a scope internally, so a read timeout
   carries a `CancelledError` in its `__context__` — reading that as a user cancel drops
   the message with no note.
2. Any other `LlmFailure` passes through unchanged.
3. `ProviderError`: our own client timed out (`timed_out`) -> "provider_timeout"; status
   None (network) or >= 500 -> "transport"; 4xx -> "grammar" (the server rejected the
   request or the grammar); any other status is a broken exchange, so "transport" too.
   An httpx timeout that escaped unwrapped is matched by class name the same way. The
   HTTP status decides, never the message text.
4. The state directory refused a read or write (a full disk, a read-only or unwritable
   directory, a damaged database: `SessionStoreError`, `sqlite3.DatabaseError`, an
   `OSError` such as ENOSPC/EROFS/EACCES, anywhere in the explicit cause chain) ->
   "storage", never "tool".
5. A tool-call parse error (class named `ToolCallParseError`, or any error carrying
   `raw_preview`) -> "grammar".
6. Fallback -> "tool". Provider code raises `ProviderError` and parsing raises parse
   errors, so an untyped exception reaching the loop escaped the tool dispatch path (or
   the glue around it); the guide files those under "tool". The tool name is attached
   when the caller knows it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import errno
import sqlite3

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.reliability.failure_taxonomy import (
    GrammarError,
    LlmFailure,
    ProviderTimeoutError,
    StorageError,
    ToolExecutionError,
    TransportError,
    TurnCancelledError,
)
from atomic_agent.sessions.store_errors import SessionStoreError

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
