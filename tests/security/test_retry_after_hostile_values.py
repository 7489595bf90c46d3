"""Retry-After values a hostile or broken server might send: clamped, ignored, or now."""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext
from atomic_agent.plugins.os.http.http_config import HttpConfig
from atomic_agent.plugins.os.http.http_tool import run_http_request
from atomic_agent.plugins.os.http.retry_after import MAX_RETRY_AFTER_S, parse_retry_after
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Reply

NOW = datetime(2025, 6, 1, 12, 0, 0, tzinfo=timezone.utc)


def test_retry_after_huge_delta_is_clamped_to_10_seconds() -> None:
    assert parse_retry_after("999999999", NOW) == MAX_RETRY_AFTER_S == 10.0


def test_retry_after_with_a_thousand_digits_is_clamped_not_a_crash() -> None:
    assert parse_retry_after("9" * 1000, NOW) == 10.0


def test_retry_after_negative_is_ignored() -> None:
    assert parse_retry_after("-5", NOW) is None


def test_retry_after_fractional_is_ignored() -> None:
    assert parse_retry_after("1.5", NOW) is None


def test_retry_after_signed_positive_is_ignored() -> None:
    assert parse_retry_after("+3", NOW) is None


@pytest.mark.parametrize("value", ["soon", "tomorrow", "Mon, 99 Foo 2025 99:99:99 GMT", "0x10", "1e3", "   "])
def test_retry_after_malformed_is_ignored(value: str) -> None:
    assert parse_retry_after(value, NOW) is None


def test_retry_after_http_date_in_the_past_means_now() -> None:
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOW) == 0.0


def test_retry_after_http_date_far_in_the_future_is_clamped() -> None:
    assert parse_retry_after("Fri, 31 Dec 2100 23:59:59 GMT", NOW) == 10.0


def test_retry_after_http_date_a_few_seconds_ahead_is_honoured() -> None:
    assert parse_retry_after("Sun, 01 Jun 2025 12:00:04 GMT", NOW) == 4.0


def test_retry_after_with_surrounding_whitespace_is_read() -> None:
    assert parse_retry_after("  3  ", NOW) == 3.0


class Waits(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.mark.parametrize("header,expected", [("86400", 10.0), ("-30", 0.5), ("garbage", 0.5),
                                             ("Sun, 06 Nov 1994 08:49:37 GMT", 0.0)])
async def test_retry_after_end_to_end_never_stalls_a_turn(header: str, expected: float, tmp_path: Path) -> None:
    async def yes(category: str, summary: str, **extra: Any) -> bool:
        return True

    waits = Waits()
    with LoopbackServer() as server:
        server.routes["/r"] = [Reply(429, "slow", {"Retry-After": header}), Reply(200, "ok")]
        result = await run_http_request({"method": "GET", "url": server.url("/r")},
                                        ToolContext("sec", tmp_path, tmp_path, asyncio.Event(), yes),
                                        HttpConfig(private_hosts=("127.0.0.1",)), sleep=waits)
    assert result.status == "ok" and waits == [expected]
