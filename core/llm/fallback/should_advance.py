"""Which failures move the fallback chain, and how fast.

The one predicate both the unary and the streaming seam route through. Transport and
model failures advance; grammar, tool and cancelled never do (the same request fails the
same way everywhere, or it is our own bug, or the user stopped it).

- "immediate": HTTP 408 / 429 / any 5xx, and a network failure that is not our own
  request timeout, switch on the first occurrence. So do 401 / 402 / 403 / 404: a
  rejected key, spent credit or a model the service no longer serves are facts about
  that one provider, and the same request can still succeed on the next link.
- "counted": our own request timeout (category provider_timeout: one slow turn is weak
  evidence, and replaying a local timeout burns another full timeout of GPU time) and
  model failures count toward `failureThreshold`.
"""

from __future__ import annotations

from typing import Literal

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.reliability.classify_failure import classify_failure, is_cancellation
from atomic_agent.reliability.failure_taxonomy import LlmFailure, TransportError, TurnCancelledError

AdvanceSignal = Literal["immediate", "counted"]
IMMEDIATE_STATUSES = frozenset({401, 402, 403, 404, 408, 429})
_TIMEOUT_CLASS_NAMES = frozenset({"ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException"})


def _chain(err: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_own_timeout(err: BaseException) -> bool:
    """Our client gave up waiting (read/write/pool timeout), as opposed to never connecting."""
    for e in _chain(err):
        if getattr(e, "timed_out", False) is True:
            return True
        if type(e).__name__ in _TIMEOUT_CLASS_NAMES or type(e) is TimeoutError:
            return True
    return False


def _status_of(err: BaseException) -> tuple[bool, int | None]:
    """(has a provider-level status answer, status) for provider errors and transport failures."""
    for e in _chain(err):
        if isinstance(e, (ProviderError, TransportError)):
            return True, e.status
    return False, None


def advance_signal(err: BaseException) -> AdvanceSignal | None:
    """How `err` moves the chain: "immediate", "counted", or None (never advances)."""
    if isinstance(err, TurnCancelledError) or is_cancellation(err):
        return None
    if isinstance(err, LlmFailure) and not isinstance(err, TransportError):
        return "counted" if err.category == "model" else None  # already classified by the loop
    is_provider, status = _status_of(err)
    if is_provider:
        if status is None:
            return "counted" if is_own_timeout(err) else "immediate"
        if status in IMMEDIATE_STATUSES or status >= 500:
            return "immediate"
        if 400 <= status < 500:
            return None  # the request itself was rejected: grammar category
        return "counted"
    category = classify_failure(err).category
    if category == "provider_timeout":
        return "counted"
    return "counted" if category in ("transport", "model") else None


def should_advance(err: BaseException) -> bool:
    return advance_signal(err) is not None
