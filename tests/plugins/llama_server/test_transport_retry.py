"""llama-server client retries: network failures and 5xx only."""

from __future__ import annotations

import asyncio

from atomic_agent.llm.provider_protocol import ProviderError, ProviderUnavailableError
from atomic_agent.plugins.llama_server.llama_client import is_retryable as is_transport_retryable


def test_network_and_5xx_are_retried() -> None:
    assert is_transport_retryable(ProviderError("reset", status=None))
    assert is_transport_retryable(ProviderUnavailableError("refused"))
    assert is_transport_retryable(ProviderError("busy", status=503))


def test_4xx_cancels_our_own_timeouts_and_other_errors_short_circuit() -> None:
    assert not is_transport_retryable(ProviderError("bad grammar", status=400))
    assert not is_transport_retryable(ProviderError("rate limited", status=429))
    assert not is_transport_retryable(asyncio.CancelledError())
    assert not is_transport_retryable(ValueError("x"))
    # our own timeout: the server was reached and too slow; another try costs another full timeout
    assert not is_transport_retryable(ProviderError("read timed out", status=None, timed_out=True))


def test_a_network_failure_with_a_cancellation_in_its_chain_is_still_retried() -> None:
    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError as inner:
            raise ProviderError("stream cut", status=None) from inner
    except ProviderError as wrapped:
        assert is_transport_retryable(wrapped)
