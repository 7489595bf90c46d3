"""Vendor error answers from a real loopback server: retries, Retry-After, streams cut mid-way."""

from __future__ import annotations

import pytest

from atomic_agent.api import CompletionRequest, ProviderUnavailableError
from atomic_agent.plugins.openai_compatible.http_errors import OpenAiHttpError, parse_retry_after
from atomic_agent.providers.fallback_chain import advance_signal

from .vendor_server import Reply, chat_reply, sse_chunks

UNARY = CompletionRequest(prompt="p", stream=False)
STREAM = CompletionRequest(prompt="p", stream=True)

BILLING_401 = {"error": {"message": "You've run out of credits. Add credits to continue.", "code": 401}}
OPENROUTER_402 = {"error": {"message": "Insufficient credits. Add more using https://openrouter.ai/settings/credits",
                            "code": 402}}
RATE_429 = {"error": {"message": "Rate limit reached for requests", "type": "requests", "code": "rate_limit_exceeded"}}


async def test_429_with_retry_after_is_retried_after_the_asked_wait(vendor, make_provider):
    vendor.script(Reply(429, RATE_429, {"Retry-After": "2"}), chat_reply("after wait"))
    provider = make_provider()
    done = await provider.complete(UNARY)
    assert done.content == "after wait"
    assert provider.waits == [2.0] and len(vendor.seen) == 2


async def test_retry_after_longer_than_the_cap_fails_at_once_for_the_fallback_chain(vendor, make_provider):
    vendor.script(Reply(429, RATE_429, {"Retry-After": "120"}), chat_reply("never"))
    provider = make_provider(retryMaxWaitS=30)
    with pytest.raises(OpenAiHttpError) as info:
        await provider.complete(UNARY)
    assert info.value.status == 429 and info.value.retry_after_s == 120
    assert provider.waits == [] and len(vendor.seen) == 1
    assert advance_signal(info.value) == "immediate"


async def test_5xx_is_retried_with_backoff_then_raised(vendor, make_provider):
    vendor.script(Reply(502, {"error": {"message": "bad gateway"}}))
    provider = make_provider(retries=2)
    with pytest.raises(OpenAiHttpError) as info:
        await provider.complete(UNARY)
    assert info.value.status == 502 and len(vendor.seen) == 3
    assert provider.waits == [0.5, 1.0]


async def test_503_is_provider_unavailable(vendor, make_provider):
    vendor.script(Reply(503, {"error": {"message": "overloaded", "type": "server_error"}}))
    with pytest.raises(ProviderUnavailableError):
        await make_provider(retries=0).complete(UNARY)


async def test_401_with_billing_body_is_not_retried_and_keeps_the_vendor_message(vendor, make_provider):
    vendor.script(Reply(401, BILLING_401))
    provider = make_provider()
    with pytest.raises(OpenAiHttpError) as info:
        await provider.complete(UNARY)
    assert info.value.status == 401 and "run out of credits" in str(info.value)
    assert len(vendor.seen) == 1 and "sk-test-123" not in str(info.value)


async def test_402_spent_credit_is_not_retried(vendor, make_provider):
    vendor.script(Reply(402, OPENROUTER_402))
    with pytest.raises(OpenAiHttpError) as info:
        await make_provider().complete(UNARY)
    assert info.value.status == 402 and len(vendor.seen) == 1


async def test_429_insufficient_quota_is_not_retried(vendor, make_provider):
    vendor.script(Reply(429, {"error": {"message": "You exceeded your current quota, please check your plan and "
                                                   "billing details.", "type": "insufficient_quota",
                                        "code": "insufficient_quota"}}, {"Retry-After": "1"}))
    provider = make_provider()
    with pytest.raises(OpenAiHttpError):
        await provider.complete(UNARY)
    assert len(vendor.seen) == 1


async def test_stream_that_fails_to_open_is_retried(vendor, make_provider):
    vendor.script(Reply(500, {"error": {"message": "boom"}}), Reply(sse=sse_chunks(["ok"])))
    provider = make_provider()
    done = await provider.complete(STREAM, lambda _t: None)
    assert done.content == "ok" and len(vendor.seen) == 2


async def test_stream_cut_mid_way_raises_and_is_not_retried(vendor, make_provider):
    vendor.script(Reply(sse=sse_chunks(["one ", "two ", "three"]), cut_after=2), Reply(sse=sse_chunks(["again"])))
    provider = make_provider()
    seen: list[str] = []
    with pytest.raises(OpenAiHttpError) as info:
        await provider.complete(STREAM, seen.append)
    assert seen == ["one "]  # output had begun
    assert info.value.status is None and len(vendor.seen) == 1


async def test_error_event_inside_a_stream_is_the_vendors_error(vendor, make_provider):
    import json

    vendor.script(Reply(sse=[json.dumps({"choices": [{"index": 0, "delta": {"content": "a"}}]}),
                             json.dumps({"error": {"message": "upstream died", "code": 502}})]))
    with pytest.raises(OpenAiHttpError) as info:
        await make_provider().complete(STREAM, lambda _t: None)
    assert info.value.status == 502 and "upstream died" in str(info.value)


async def test_unreachable_endpoint_is_provider_unavailable():
    from atomic_agent.plugins.llama_server.server_process import free_loopback_port
    from atomic_agent.plugins.openai_compatible.endpoint_entry import resolve_endpoint
    from atomic_agent.plugins.openai_compatible.openai_provider import OpenAiCompatibleProvider

    port = free_loopback_port()
    ep = resolve_endpoint({"id": "x", "kind": "openai-compatible", "preset": "llamacpp",
                           "baseUrl": f"http://127.0.0.1:{port}/v1", "model": "m", "retries": 0}, {})
    provider = OpenAiCompatibleProvider(ep)
    try:
        with pytest.raises(ProviderUnavailableError) as info:
            await provider.complete(UNARY)
    finally:
        await provider.close()
    assert info.value.status is None and advance_signal(info.value) == "immediate"


def test_retry_after_accepts_seconds_milliseconds_and_http_dates():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412470.0) == 10.0
    assert parse_retry_after({}) is None
