"""`os.http.request` against a real loopback server: methods, allowlist modes, retries, caps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext
from atomic_agent.plugins.os.http.http_config import HttpConfig
from atomic_agent.plugins.os.http.http_tool import http_tool_spec, run_http_request
from atomic_agent.plugins.os.http.retry_after import parse_retry_after
from atomic_agent.plugins.os.http.retry_policy import RetryPolicy, may_replay
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Reply

LOOPBACK = ("127.0.0.1",)


class Waits(list):
    async def __call__(self, seconds: float) -> None:  # the retry sleep, recorded instead of slept
        self.append(seconds)


def context(tmp_path: Path, answer: bool = True) -> tuple[ToolContext, list[dict[str, Any]]]:
    asked: list[dict[str, Any]] = []

    async def request_approval(category: str, summary: str, **extra: Any) -> bool:
        asked.append({"category": category, "summary": summary, **extra})
        return answer

    return ToolContext("s", tmp_path, tmp_path, asyncio.Event(), request_approval), asked


@pytest.fixture()
def server():  # noqa: ANN201
    with LoopbackServer() as srv:
        yield srv


async def request(args: dict[str, Any], tmp_path: Path, config: HttpConfig | None = None, answer: bool = True):  # noqa: ANN201
    ctx, asked = context(tmp_path, answer)
    waits = Waits()
    result = await run_http_request(args, ctx, config or HttpConfig(private_hosts=LOOPBACK), sleep=waits)
    return result, asked, waits


async def test_get_returns_status_headers_and_body(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/zen"] = [Reply.json({"zen": "keep it simple"})]
    result, asked, _ = await request({"method": "GET", "url": server.url("/zen")}, tmp_path)
    assert result.status == "ok" and result.details["status"] == 200
    assert '"zen"' in result.details["body"]
    assert asked[0]["category"] == "http"


async def test_post_sends_body_and_headers(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/items"] = [Reply.json({"id": 1}, status=201)]
    await request({"method": "POST", "url": server.url("/items"), "body": '{"a": 1}',
                   "headers": {"Content-Type": "application/json", "X-Trace": "t1"}}, tmp_path)
    got = server.hits("/items")[0]
    assert got.body == b'{"a": 1}' and got.headers["x-trace"] == "t1"


async def test_the_host_header_keeps_the_name_while_the_connection_is_pinned(server: LoopbackServer,
                                                                            tmp_path: Path) -> None:
    server.routes["/h"] = [Reply(200, "ok")]
    await request({"method": "GET", "url": server.url("/h", host="localhost")}, tmp_path,
                  HttpConfig(private_hosts=("localhost",)))
    assert server.hits("/h")[0].headers["host"] == f"localhost:{server.port}"


async def test_a_4xx_answer_is_an_error_result_with_the_body(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/missing"] = [Reply(404, "nope", {"Content-Type": "text/plain"})]
    result, _, waits = await request({"method": "GET", "url": server.url("/missing")}, tmp_path)
    assert result.status == "error" and result.details["status"] == 404 and waits == []


async def test_denied_request_is_not_sent(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/x"] = [Reply(200, "ok")]
    result, _, _ = await request({"method": "DELETE", "url": server.url("/x")}, tmp_path, answer=False)
    assert result.status == "error" and result.details["denied"]
    assert server.hits("/x") == []


async def test_allowlist_mode_skips_the_gate_for_listed_hosts_only(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/x"] = [Reply(200, "ok")]
    config = HttpConfig(approval_mode="allowlist", allowed_hosts=("127.0.0.1",), private_hosts=("127.0.0.1", "localhost"))
    _, asked, _ = await request({"method": "GET", "url": server.url("/x")}, tmp_path, config)
    assert asked == []
    _, asked, _ = await request({"method": "GET", "url": server.url("/x", host="localhost")}, tmp_path, config)
    assert len(asked) == 1


async def test_allowlist_only_mode_refuses_unlisted_hosts(server: LoopbackServer, tmp_path: Path) -> None:
    config = HttpConfig(approval_mode="allowlist-only", allowed_hosts=("api.example.com",), private_hosts=LOOPBACK)
    result, asked, _ = await request({"method": "GET", "url": server.url("/x")}, tmp_path, config)
    assert result.status == "error" and "http.allowedHosts" in result.summary
    assert asked == [] and server.received == []


async def test_get_retries_retryable_statuses_then_succeeds(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/flaky"] = [Reply(503, "busy"), Reply(502, "bad"), Reply(200, "fine")]
    result, _, waits = await request({"method": "GET", "url": server.url("/flaky")}, tmp_path)
    assert result.status == "ok" and result.details["attempts"] == 3
    assert waits == [0.5, 1.0]  # exponential backoff from the base delay


async def test_retry_after_wins_over_the_local_schedule(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/limited"] = [Reply(429, "slow down", {"Retry-After": "3"}), Reply(200, "ok")]
    _, _, waits = await request({"method": "GET", "url": server.url("/limited")}, tmp_path)
    assert waits == [3.0]


async def test_retries_give_up_after_the_budget(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/down"] = [Reply(504, "gateway timeout")]
    result, _, waits = await request({"method": "GET", "url": server.url("/down")}, tmp_path,
                                     HttpConfig(private_hosts=LOOPBACK, max_retries=3))
    assert result.status == "error" and result.details["status"] == 504
    assert len(server.hits("/down")) == 4 and len(waits) == 3


async def test_backoff_is_capped_at_the_max_delay(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/down"] = [Reply(503, "busy")]
    config = HttpConfig(private_hosts=LOOPBACK, max_retries=5, retry_base_delay_ms=1000, retry_max_delay_ms=3000)
    _, _, waits = await request({"method": "GET", "url": server.url("/down")}, tmp_path, config)
    assert waits == [1.0, 2.0, 3.0, 3.0, 3.0]


async def test_a_stable_4xx_is_never_retried(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/bad"] = [Reply(400, "bad request")]
    await request({"method": "GET", "url": server.url("/bad")}, tmp_path)
    assert len(server.hits("/bad")) == 1


async def test_a_get_timeout_is_retried(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/slow"] = [Reply(200, "late", stall_s=1.5), Reply(200, "quick")]
    result, _, waits = await request({"method": "GET", "url": server.url("/slow"), "timeout_s": 0.3}, tmp_path)
    assert result.status == "ok" and "quick" in result.details["body"] and len(waits) == 1


async def test_a_post_timeout_is_not_replayed(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/slow"] = [Reply(200, "late", stall_s=1.5)]
    result, _, waits = await request({"method": "POST", "url": server.url("/slow"), "body": "x", "timeout_s": 0.3},
                                     tmp_path)
    assert result.status == "error" and result.details["timedOut"] and "not replayed" in result.summary
    assert waits == []


async def test_a_post_is_replayed_on_429_with_retry_after(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/submit"] = [Reply(429, "later", {"Retry-After": "1"}), Reply(201, "created")]
    result, _, _ = await request({"method": "POST", "url": server.url("/submit"), "body": "x"}, tmp_path)
    assert result.details["status"] == 201 and len(server.hits("/submit")) == 2


async def test_a_post_is_not_replayed_on_429_without_retry_after(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/submit"] = [Reply(429, "later")]
    await request({"method": "POST", "url": server.url("/submit"), "body": "x"}, tmp_path)
    assert len(server.hits("/submit")) == 1


async def test_the_body_is_capped_whatever_its_size(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/big"] = [Reply(200, b"a" * 300_000, {"Content-Type": "text/plain"})]
    result, _, _ = await request({"method": "GET", "url": server.url("/big")}, tmp_path,
                                 HttpConfig(private_hosts=LOOPBACK, max_response_bytes=10_000))
    assert result.details["bodyBytes"] == 10_000 and result.details["truncated"]


async def test_same_host_redirects_are_followed_and_rechecked(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/old"] = [Reply(301, "", {"Location": "/new"})]
    server.routes["/new"] = [Reply(200, "moved here")]
    result, _, _ = await request({"method": "GET", "url": server.url("/old")}, tmp_path)
    assert result.details["status"] == 200 and result.details["redirects"] == [server.url("/new")]


async def test_a_cross_host_redirect_is_returned_not_followed(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/away"] = [Reply(302, "", {"Location": "https://elsewhere.example/"})]
    result, _, _ = await request({"method": "GET", "url": server.url("/away")}, tmp_path)
    assert result.details["status"] == 302 and "not followed" in result.summary


@pytest.mark.parametrize("args,problem", [
    ({"method": "BREW", "url": "http://x/"}, "method"),
    ({"method": "GET", "url": ""}, "url"),
    ({"method": "GET", "url": "http://x/", "headers": {"A": 1}}, "headers"),
    ({"method": "GET", "url": "http://x/", "headers": {"A": "b\r\nInjected: 1"}}, "line breaks"),
])
async def test_bad_args_are_clear_errors(args: dict[str, Any], problem: str, tmp_path: Path) -> None:
    result, asked, _ = await request(args, tmp_path)
    assert result.status == "error" and problem in result.summary and asked == []


def test_retry_after_parses_delta_seconds_and_http_dates() -> None:
    from datetime import datetime, timezone

    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after("Wed, 01 Jan 2025 12:00:05 GMT", now) == 5.0
    assert parse_retry_after("Wednesday, 01-Jan-25 12:00:04 GMT", now) == 4.0
    assert parse_retry_after("Wed Jan  1 12:00:03 2025", now) == 3.0
    assert parse_retry_after(None) is None and parse_retry_after("") is None


def test_replay_rules_follow_idempotency() -> None:
    assert may_replay("GET", 502, False, None) and may_replay("PUT", 504, False, None)
    assert may_replay("GET", None, True, None) and not may_replay("POST", None, True, None)
    assert not may_replay("POST", 502, False, 1.0) and not may_replay("POST", 503, False, None)
    assert may_replay("POST", 503, False, 0.0) and may_replay("PATCH", 429, False, 2.0)
    assert not may_replay("GET", 500, False, None)
    assert RetryPolicy(5, 0.5, 100.0).backoff(10, None) == 10.0  # never beyond the 10 s clamp


def test_spec_is_gated_rare_and_asks_under_http() -> None:
    class Bare:
        config = None

    spec = http_tool_spec(Bare())
    assert (spec.name, spec.resource_class.value, spec.tier.value, spec.approval_category) == \
        ("os.http.request", "approval_gated", "rare", "http")
