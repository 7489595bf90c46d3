"""Which failures move the chain (fallback invariants 1 and 4)."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from atomic_agent.api import ProviderError, ProviderUnavailableError
from atomic_agent.providers.fallback_chain import advance_signal, is_own_timeout, should_advance
from atomic_agent.reliability.failure_taxonomy import (
    GrammarError,
    ModelError,
    ToolExecutionError,
    TransportError,
    TurnCancelledError,
)


def timed_out_llama_error() -> ProviderError:
    """What the llama-server client raises for a read timeout: status None, httpx cause."""
    try:
        try:
            raise httpx.ReadTimeout("timed out")
        except httpx.ReadTimeout as exc:
            raise ProviderError("request to llama-server failed (ReadTimeout)", status=None) from exc
    except ProviderError as err:
        return err


class OpenAiLikeTimeout(ProviderError):
    timed_out = True


@pytest.mark.parametrize("status", [429, 408, 500, 502, 503, 504])
def test_429_408_and_5xx_switch_immediately(status):
    assert advance_signal(ProviderError("x", status=status)) == "immediate"


def test_network_failure_switches_immediately():
    assert advance_signal(ProviderUnavailableError("refused", status=None)) == "immediate"
    assert advance_signal(TransportError("down", status=None)) == "immediate"


@pytest.mark.parametrize("status", [401, 402, 403, 404])
def test_rejected_key_spent_credit_and_gone_model_switch_immediately(status):
    assert advance_signal(ProviderError("x", status=status)) == "immediate"


def test_own_request_timeout_on_either_transport_only_counts():
    llama = timed_out_llama_error()
    cloud = OpenAiLikeTimeout("slow", status=None)
    assert is_own_timeout(llama) and is_own_timeout(cloud)
    assert advance_signal(llama) == "counted" and advance_signal(cloud) == "counted"


def test_model_failures_count_toward_the_threshold():
    assert advance_signal(ModelError("cut", "truncated")) == "counted"


@pytest.mark.parametrize("err", [
    GrammarError("did not parse"),
    ProviderError("bad grammar", status=400),
    ProviderError("context overflow", status=400),
    ToolExecutionError("bug in glue"),
    TurnCancelledError(),
    asyncio.CancelledError(),
    ValueError("our own bug"),
], ids=["grammar", "http400", "overflow", "tool", "cancelled", "asyncio-cancel", "untyped"])
def test_grammar_tool_and_cancelled_never_advance(err):
    assert advance_signal(err) is None and not should_advance(err)
