"""run_with_fallback: one completion through the chain.

Each candidate is attempted in turn while the failures say "advance". An attempt whose
stream has already emitted output is never restarted elsewhere: its failure is recorded
and propagates as is. When the whole chain is exhausted the last error is re-raised
unchanged, so the loop classifies it exactly as without a chain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

from atomic_agent.llm.fallback.provider_fallback_chain import ProviderFallbackChain
from atomic_agent.llm.fallback.should_advance import advance_signal
from atomic_agent.llm.fallback.switch_notice import SwitchNotice
from atomic_agent.llm.provider_protocol import ProviderError

T = TypeVar("T")


@attrs.define
class LiveFlag:
    """Set by the attempt once output reached the caller; a live stream is not replayed."""

    live: bool = False


def describe_failure(err: BaseException) -> str:
    status = getattr(err, "status", None)
    text = str(err).strip()
    short = text if len(text) <= 160 else text[:157] + "..."
    if isinstance(err, ProviderError):
        what = f"HTTP {status}" if status is not None else "no HTTP answer"
        return f"{what}: {short}" if short else what
    return f"{type(err).__name__}: {short}" if short else type(err).__name__


async def run_with_fallback(chain: ProviderFallbackChain, attempt: Callable[[str, LiveFlag], Awaitable[T]],
                            session_id: str | None = None, *,
                            judge: Callable[[T], BaseException | None] | None = None,
                            on_notice: Callable[[SwitchNotice], None] | None = None) -> T:
    """Serve one completion. `judge(result)` names a failure inside a returned result (an
    unusable completion), which counts like a failure but is handed back when not switching."""
    pick = chain.pick(session_id)
    reason = ""
    last_error: BaseException | None = None
    last_result: tuple[T] | None = None
    for provider_id in chain.candidates(pick, session_id):
        flag = LiveFlag()
        try:
            result = await attempt(provider_id, flag)
        except Exception as err:
            signal = advance_signal(err)
            if signal is None:
                raise
            switch = chain.record_failure(session_id, provider_id, signal, pick)
            if flag.live or not switch:
                raise
            reason = reason or f"{provider_id}: {describe_failure(err)}"
            last_error, last_result = err, None
            continue
        failure = judge(result) if judge is not None else None
        if failure is not None:
            switch = chain.record_failure(session_id, provider_id, "counted", pick)
            if not switch or flag.live:
                return result
            reason = reason or f"{provider_id}: {describe_failure(failure)}"
            last_error, last_result = None, (result,)
            continue
        notice = chain.record_success(session_id, provider_id, pick, reason)
        if notice is not None and on_notice is not None:
            on_notice(notice)
        return result
    if last_result is not None:
        return last_result[0]
    assert last_error is not None
    raise last_error
