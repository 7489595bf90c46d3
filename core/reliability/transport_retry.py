"""Which provider errors the bounded transport retry may repeat.

Shared by every provider's retry loop so retry semantics cannot drift from the
taxonomy: only errors `classify_failure` files as "transport" are retried, and of
those only network failures and 5xx (an odd 1xx-3xx answer is not worth repeating).
"""

from __future__ import annotations

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.reliability.classify_failure import is_cancellation


def is_transport_retryable(err: BaseException) -> bool:
    """True for network failures (status None) and HTTP 5xx; False for 4xx, cancels and
    anything that is not a `ProviderError`."""
    if not isinstance(err, ProviderError) or is_cancellation(err):
        return False
    return err.status is None or err.status >= 500
