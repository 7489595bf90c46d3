"""End-to-end SSRF probes — only ever against loopback, where this test's own server listens.

Every spelling the system resolver reads as 127.0.0.1 must be blocked by default (the
server never sees a request) and reachable once the user allows the host in config.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext, make_tool_context
from atomic_agent.plugins.os.http.http_config import HttpConfig
from atomic_agent.plugins.os.http.http_tool import run_http_request
from atomic_agent.plugins.os.web.fetch_tool import run_fetch
from atomic_agent.plugins.os.web.web_config import WebConfig
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Reply

SPELLINGS = {
    "literal": "127.0.0.1", "decimal": "2130706433", "octal": "0177.0.0.1", "short": "127.1",
    "hex": "0x7f000001", "ipv6_mapped": "[::ffff:127.0.0.1]", "localhost": "localhost",
    "localhost_trailing_dot": "localhost.",
}


@pytest.fixture()
def server():  # noqa: ANN201
    with LoopbackServer() as srv:
        srv.routes["/secret"] = [Reply(200, "internal admin page", {"Content-Type": "text/plain"})]
        yield srv


def ctx(tmp_path: Path) -> ToolContext:
    async def yes(category: str, summary: str, **extra: Any) -> bool:
        return True

    return ToolContext("sec", tmp_path, tmp_path, asyncio.Event(), yes)


@pytest.mark.parametrize("spelling", list(SPELLINGS))
async def test_loopback_spelling_is_blocked_by_default_for_http_request(spelling: str, server: LoopbackServer,
                                                                       tmp_path: Path) -> None:
    url = server.url("/secret", host=SPELLINGS[spelling])
    result = await run_http_request({"method": "GET", "url": url}, ctx(tmp_path), HttpConfig())
    assert result.status == "error" and result.details["ssrfBlocked"]
    assert server.received == []


@pytest.mark.parametrize("spelling", list(SPELLINGS))
async def test_loopback_spelling_is_blocked_by_default_for_web_fetch(spelling: str, server: LoopbackServer,
                                                                    tmp_path: Path) -> None:
    url = server.url("/secret", host=SPELLINGS[spelling])
    result = await run_fetch({"url": url}, make_tool_context(tmp_path), WebConfig(), HttpConfig())
    assert result.status == "error" and result.details["ssrfBlocked"]
    assert server.received == []


@pytest.mark.parametrize("spelling", list(SPELLINGS))
async def test_loopback_spelling_is_reachable_when_the_user_allows_the_address(spelling: str, server: LoopbackServer,
                                                                               tmp_path: Path) -> None:
    url = server.url("/secret", host=SPELLINGS[spelling])
    result = await run_http_request({"method": "GET", "url": url}, ctx(tmp_path),
                                    HttpConfig(private_hosts=("127.0.0.1",)))
    assert result.status == "ok" and "internal admin page" in result.details["body"]


async def test_allowing_localhost_by_name_allows_only_that_name(server: LoopbackServer, tmp_path: Path) -> None:
    allowed = HttpConfig(private_hosts=("localhost",))
    by_name = await run_http_request({"method": "GET", "url": server.url("/secret", host="localhost")},
                                     ctx(tmp_path), allowed)
    by_address = await run_http_request({"method": "GET", "url": server.url("/secret")}, ctx(tmp_path), allowed)
    assert by_name.status == "ok" and by_address.details["ssrfBlocked"]


async def test_a_block_never_reaches_the_approval_prompt(server: LoopbackServer, tmp_path: Path) -> None:
    asked: list[str] = []

    async def record(category: str, summary: str, **extra: Any) -> bool:
        asked.append(summary)
        return True

    context = ToolContext("sec", tmp_path, tmp_path, asyncio.Event(), record)
    await run_http_request({"method": "GET", "url": server.url("/secret")}, context, HttpConfig())
    assert asked == []


async def test_a_redirect_to_an_unallowed_loopback_spelling_is_blocked(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/hop"] = [Reply(302, "", {"Location": f"http://127.0.0.1:{server.port}/secret"})]
    result = await run_fetch({"url": server.url("/hop", host="localhost")}, make_tool_context(tmp_path), WebConfig(),
                             HttpConfig(private_hosts=("localhost",)))
    assert result.status == "error" and result.details["ssrfBlocked"]
    assert server.hits("/secret") == []


async def test_a_redirect_to_a_file_url_is_blocked(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/hop"] = [Reply(302, "", {"Location": "file:///etc/passwd"})]
    result = await run_fetch({"url": server.url("/hop")}, make_tool_context(tmp_path), WebConfig(),
                             HttpConfig(private_hosts=("127.0.0.1",)))
    assert result.status == "error" and "only http and https" in result.summary


async def test_a_redirect_loop_stops_at_the_hop_cap(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/loop"] = [Reply(302, "", {"Location": "/loop"})]
    result = await run_fetch({"url": server.url("/loop")}, make_tool_context(tmp_path), WebConfig(max_retries=0),
                             HttpConfig(private_hosts=("127.0.0.1",), max_redirects=5))
    assert result.status == "error" and "more than 5 redirects" in result.summary
    assert len(server.hits("/loop")) == 6


async def test_dns_rebinding_cannot_move_the_connection_after_the_check(server: LoopbackServer, tmp_path: Path) -> None:
    # first answer: the address the user allowed; any later lookup would point elsewhere
    answers = [["127.0.0.1"]]
    lookups: list[str] = []

    async def rebinding(host: str, port: int) -> list[str]:
        lookups.append(host)
        return answers.pop(0) if answers else ["127.0.0.2"]

    result = await run_http_request({"method": "GET", "url": f"http://rebind.test:{server.port}/secret"},
                                    ctx(tmp_path), HttpConfig(private_hosts=("127.0.0.1",)), resolver=rebinding)
    assert result.status == "ok" and len(server.hits("/secret")) == 1
    assert lookups == ["rebind.test"]  # resolved once; the connection went to that answer
    assert server.hits("/secret")[0].headers["host"] == f"rebind.test:{server.port}"


async def test_proxy_environment_variables_cannot_reroute_requests(server: LoopbackServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # the discard port: nothing answers there
    result = await run_http_request({"method": "GET", "url": server.url("/secret")}, ctx(tmp_path),
                                    HttpConfig(private_hosts=("127.0.0.1",)))
    assert result.status == "ok"


async def test_ipv6_loopback_and_unspecified_are_blocked(tmp_path: Path) -> None:
    for url in ("http://[::1]:1/", "http://0.0.0.0:1/", "http://0:1/", "http://[::]:1/"):
        result = await run_http_request({"method": "GET", "url": url}, ctx(tmp_path), HttpConfig())
        assert result.details.get("ssrfBlocked"), url
