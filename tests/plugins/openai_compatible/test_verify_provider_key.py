"""The key check before save: one max_tokens:1 probe, classified from real-world answers."""

from __future__ import annotations

import asyncio
import json

import pytest

from atomic_agent.plugins.openai_compatible.verify_classification import (
    classify_verify_response,
    is_blocking_verify_status,
)
from atomic_agent.plugins.openai_compatible.verify_key import VerifyTarget, probe_model, verify_provider_key

from .vendor_server import Reply, chat_reply

# (vendor, HTTP status, body as the vendor sends it, expected verdict)
REAL_WORLD_ANSWERS = [
    ("openai", 200, {"choices": [{"message": {"content": "p"}, "finish_reason": "length"}]}, "ok"),
    ("openai", 401, {"error": {"message": "Incorrect API key provided: sk-abc***xyz. You can find your API key at "
                                          "https://platform.openai.com/account/api-keys.",
                               "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}},
     "invalid_key"),
    ("openai", 429, {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                                          "details.", "type": "insufficient_quota", "param": None,
                               "code": "insufficient_quota"}}, "no_balance"),
    ("openai", 429, {"error": {"message": "Rate limit reached for gpt-4o-mini in organization org-x on requests per "
                                          "min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.",
                               "type": "requests", "param": None, "code": "rate_limit_exceeded"}}, "rate_limited"),
    ("openai", 404, {"error": {"message": "The model `gpt-9` does not exist or you do not have access to it.",
                               "type": "invalid_request_error", "param": None, "code": "model_not_found"}},
     "model_unavailable"),
    ("openrouter", 401, {"error": {"message": "No auth credentials found", "code": 401}}, "invalid_key"),
    ("openrouter", 401, {"error": {"message": "User not found.", "code": 401}}, "invalid_key"),
    ("openrouter", 402, {"error": {"message": "Insufficient credits. Add more using "
                                              "https://openrouter.ai/settings/credits", "code": 402}}, "no_balance"),
    ("openrouter", 400, {"error": {"message": "openai/gpt-9 is not a valid model ID", "code": 400}},
     "model_unavailable"),
    ("prepaid", 401, {"error": {"message": "You've run out of credits. Please top up your balance.", "code": 401}},
     "no_balance"),
    ("prepaid", 403, {"error": {"message": "Insufficient balance", "code": 403}}, "no_balance"),
    ("anthropic", 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}},
     "invalid_key"),
    ("anthropic", 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                   "message": "Your credit balance is too low to access the Anthropic "
                                                              "API. Please go to Plans & Billing to upgrade or "
                                                              "purchase credits."}}, "no_balance"),
    ("gemini", 400, [{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                "status": "INVALID_ARGUMENT",
                                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                             "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}],
     "invalid_key"),
    ("groq", 401, {"error": {"message": "Invalid API Key", "type": "invalid_request_error",
                             "code": "invalid_api_key"}}, "invalid_key"),
    ("deepseek", 402, {"error": {"message": "Insufficient Balance", "type": "unknown_error", "param": None,
                                 "code": "invalid_request_error"}}, "no_balance"),
    ("moonshot", 429, {"error": {"message": "Your account org-x is suspended due to insufficient balance, please "
                                            "recharge your account or check your plan and billing details",
                                 "type": "exceeded_current_quota_error"}}, "no_balance"),
    ("mistral", 401, {"message": "Unauthorized", "request_id": "abc"}, "invalid_key"),
    ("any", 403, {"error": {"message": "Forbidden"}}, "invalid_key"),
    ("any", 408, {"error": {"message": "Request timed out"}}, "timeout"),
    ("any", 500, "Internal Server Error", "provider_error"),
    ("any", 503, {"error": {"message": "The server is overloaded or not ready yet.", "type": "server_error"}},
     "provider_error"),
]


@pytest.mark.parametrize("vendor_name,status,body,expected", REAL_WORLD_ANSWERS,
                         ids=[f"{v}-{s}-{e}" for v, s, _, e in REAL_WORLD_ANSWERS])
def test_classification_of_real_world_answers(vendor_name, status, body, expected):
    text = body if isinstance(body, str) else json.dumps(body)
    assert classify_verify_response(status, text) == expected


def test_only_invalid_key_and_no_balance_block_saving():
    blocking = {s for s in ("ok", "invalid_key", "no_balance", "model_unavailable", "rate_limited", "unreachable",
                            "timeout", "provider_error", "cancelled") if is_blocking_verify_status(s)}
    assert blocking == {"invalid_key", "no_balance"}


def target(vendor, **kw) -> VerifyTarget:
    return VerifyTarget(base_url=vendor.url + "/v1", model=kw.pop("model", "m-1"), api_key="sk-live", **kw)


async def test_probe_posts_one_max_tokens_1_completion(vendor):
    vendor.script(chat_reply("x", finish="length"))
    verdict = await verify_provider_key(target(vendor))
    assert verdict.status == "ok" and not verdict.blocking
    assert len(vendor.seen) == 1
    body = vendor.seen[0].body
    assert body["max_tokens"] == 1 and body["model"] == "m-1" and body["stream"] is False


async def test_a_failing_probe_is_not_retried(vendor):
    vendor.script(Reply(503, {"error": {"message": "busy"}}, {"Retry-After": "0"}), chat_reply())
    verdict = await verify_provider_key(target(vendor))
    assert verdict.status == "provider_error" and len(vendor.seen) == 1


async def test_invalid_key_verdict_blocks(vendor):
    vendor.script(Reply(401, REAL_WORLD_ANSWERS[1][2]))
    verdict = await verify_provider_key(target(vendor))
    assert verdict.status == "invalid_key" and verdict.blocking and verdict.http_status == 401


async def test_anthropic_preset_sends_x_api_key_and_version(vendor):
    from atomic_agent.plugins.openai_compatible.vendor_presets import preset_named

    anthropic = preset_named("anthropic")
    await verify_provider_key(target(vendor, api_key_header=anthropic.api_key_header, headers=anthropic.headers))
    headers = {k.lower(): v for k, v in vendor.seen[0].headers.items()}
    assert headers["x-api-key"] == "sk-live" and headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in headers


async def test_openrouter_probe_uses_the_cheapest_paid_model():
    chosen = probe_model(VerifyTarget("https://openrouter.ai/api/v1", "meta-llama/llama-3.3-70b-instruct:free",
                                      preset="openrouter"))
    from atomic_agent.plugins.openai_compatible.openrouter_catalog import OPENROUTER_MODELS

    row = next(m for m in OPENROUTER_MODELS if m.id == chosen)
    assert not row.free and row.prompt_per_m > 0
    assert all(m.free or m.routed or m.prompt_per_m + m.completion_per_m >= row.prompt_per_m + row.completion_per_m
               for m in OPENROUTER_MODELS)


async def test_cancelled_before_the_probe_is_cancelled_and_sends_nothing(vendor):
    cancel = asyncio.Event()
    cancel.set()
    verdict = await verify_provider_key(target(vendor), cancelled=cancel)
    assert verdict.status == "cancelled" and vendor.seen == []


async def test_an_answer_that_arrived_is_classified_even_if_cancel_came_later(vendor):
    cancel = asyncio.Event()
    vendor.script(Reply(401, {"error": {"message": "No auth credentials found", "code": 401}}))
    verdict = await verify_provider_key(target(vendor), cancelled=cancel)
    cancel.set()  # too late: the verdict is ordinary; callers re-check their flag before acting
    assert verdict.status == "invalid_key"


async def test_unreachable_endpoint_is_unreachable_and_does_not_block():
    from atomic_agent.plugins.llama_server.server_process import free_loopback_port

    port = free_loopback_port()
    verdict = await verify_provider_key(VerifyTarget(f"http://127.0.0.1:{port}/v1", "m", "k"))
    assert verdict.status == "unreachable" and not verdict.blocking
