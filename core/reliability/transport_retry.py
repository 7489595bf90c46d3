"""Which provider errors the bounded transport retry may repeat.

Shared by every provider's retry loop so retry semantics cannot drift from the
taxonomy: only errors `classify_failure` files as "transport" are retried, and of
those only network failures and 5xx (an odd 1xx-3xx answer is not worth repeating).
Our own timeout ("provider_timeout") is not repeated: the provider was reached and was
too slow, and a second try costs a second full timeout (the guide's fallback rule for a
self-inflicted timeout: weak evidence, counted, never replayed at once).
"""

from __future__ import annotations

from atomic_agent.llm.provider_protocol import ProviderError


def is_transport_retryable(err: BaseException) -> bool:
    """True for network failures (status None) and HTTP 5xx; False for 4xx, our own
    timeouts and anything that is not a `ProviderError` (a cancellation is a BaseException
    that never reaches a retry loop)."""
    if not isinstance(err, ProviderError) or getattr(err, "timed_out", False):
        return False
    return err.status is None or err.status >= 500
