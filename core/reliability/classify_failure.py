"""classify_failure: the one place raw exceptions are mapped onto the failure taxonomy.

Order of decisions (first match wins):
1. A `TurnCancelledError` passes through; the caller saying the turn was cancelled
   (`cancelled=True`, the turn's abort flag) or an `asyncio.CancelledError` anywhere in
   the cause chain makes it "cancelled" — cancelling mid-request must not read as a
   transport or tool failure.
2. Any other `LlmFailure` passes through unchanged.
3. `ProviderError`: status None (network) or >= 500 -> "transport"; 4xx -> "grammar"
   (the server rejected the request or the grammar); any other status is a broken
   exchange with the server, so "transport" too. The HTTP status decides, never the
   message text ("connection aborted" is a network failure, not a cancel).
4. A tool-call parse error (class named `ToolCallParseError`, or any error carrying
   `raw_preview`) -> "grammar".
5. A message mentioning aborted / cancelled -> "cancelled".
6. Fallback -> "tool". Provider code raises `ProviderError` and parsing raises parse
   errors, so an untyped exception reaching the loop escaped the tool dispatch path (or
   the glue around it); the guide files those under "tool". The tool name is attached
   when the caller knows it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.reliability.failure_taxonomy import (
    GrammarError,
    LlmFailure,
    ToolExecutionError,
    TransportError,
    TurnCancelledError,
)

PARSE_ERROR_CLASS_NAME = "ToolCallParseError"
_CANCEL_WORDS = re.compile(r"\b(abort(ed)?|cancell?ed)\b", re.IGNORECASE)
_CANCEL_TYPES = (asyncio.CancelledError, concurrent.futures.CancelledError)


def _cause_chain(err: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def is_cancellation(err: BaseException) -> bool:
    """True when `err` is, or was caused by, an asyncio / futures cancellation."""
    return any(isinstance(e, _CANCEL_TYPES) or type(e).__name__ == "AbortError" for e in _cause_chain(err))


def is_parse_error(err: BaseException) -> bool:
    """True for tool-call parse errors, matched by class name so this module need not
    import the parser (any subclass of a `ToolCallParseError` counts)."""
    return (any(cls.__name__ == PARSE_ERROR_CLASS_NAME for cls in type(err).__mro__)
            or hasattr(err, "raw_preview"))


def _describe(err: BaseException) -> str:
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _from_provider(err: ProviderError) -> LlmFailure:
    status = err.status
    if status is not None and 400 <= status < 500:
        raw = err.body if err.body is not None else str(err)
        return GrammarError(f"provider rejected the request (HTTP {status}): {err}",
                            raw_preview=raw if isinstance(raw, str) else repr(raw))
    where = f" at {err.url}" if err.url else ""
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
    elif is_parse_error(err):
        failure = GrammarError(f"could not parse the tool call: {err}",
                               raw_preview=str(getattr(err, "raw_preview", "") or ""))
    elif _CANCEL_WORDS.search(str(err)):
        failure = TurnCancelledError(f"turn cancelled: {err}")
    else:
        where = f" in {tool}" if tool else ""
        failure = ToolExecutionError(f"unexpected error{where}: {_describe(err)}", tool=tool)
    failure.__cause__ = err
    return failure
