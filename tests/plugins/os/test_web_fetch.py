"""`os.web.fetch` against a loopback server, and the stdlib HTML converter."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.os.http.http_config import HttpConfig
from atomic_agent.plugins.os.web.fetch_tool import fetch_tool_spec, run_fetch
from atomic_agent.plugins.os.web.html_to_text import html_to_text
from atomic_agent.plugins.os.web.web_config import WebConfig
from tests.plugins.os.loopback_vendor_server import LoopbackServer, Reply

PAGE = """<html><head><title>Release notes</title><script>track()</script><style>p{}</style></head>
<body><nav>Home | About</nav><h1>Version <b>2.0</b></h1><p>Read the <a href="/docs">docs</a> first.</p>
<ul><li>faster</li><li>smaller</li></ul><pre>pip install thing</pre>
<table><tr><th>os</th><th>ok</th></tr><tr><td>linux</td><td>yes</td></tr></table><footer>(c) 2025</footer></body></html>"""
LOOPBACK = HttpConfig(private_hosts=("127.0.0.1",))


class Waits(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture()
def server():  # noqa: ANN201
    with LoopbackServer() as srv:
        yield srv


def test_html_becomes_markdown_without_scripts_or_chrome() -> None:
    title, text = html_to_text(PAGE, True, "https://example.com/notes/")
    assert title == "Release notes"
    assert "# Version **2.0**" in text and "[docs](https://example.com/docs)" in text
    assert "- faster\n- smaller" in text and "```\npip install thing\n```" in text and "| linux | yes |" in text
    assert "track()" not in text and "Home | About" not in text and "(c) 2025" not in text


def test_html_becomes_plain_text() -> None:
    _, text = html_to_text(PAGE, False)
    assert "Version 2.0" in text and "Read the docs first." in text and "#" not in text and "[" not in text


async def test_fetch_returns_markdown(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/notes"] = [Reply.html(PAGE)]
    result = await run_fetch({"url": server.url("/notes")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK)
    assert result.status == "ok" and result.details["title"] == "Release notes"
    assert "# Version **2.0**" in result.details["text"]


async def test_fetch_returns_text_format(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/notes"] = [Reply.html(PAGE)]
    result = await run_fetch({"url": server.url("/notes"), "format": "text"}, make_tool_context(tmp_path),
                             WebConfig(), LOOPBACK)
    assert "**" not in result.details["text"]


async def test_fetch_caps_characters_and_says_so(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/long"] = [Reply(200, "word " * 5000, {"Content-Type": "text/plain"})]
    result = await run_fetch({"url": server.url("/long"), "max_chars": 300}, make_tool_context(tmp_path),
                             WebConfig(), LOOPBACK)
    assert result.details["charsTruncated"] and "raise max_chars" in result.details["text"]


async def test_fetch_caps_bytes_read(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/huge"] = [Reply(200, b"x" * 500_000, {"Content-Type": "text/plain"})]
    result = await run_fetch({"url": server.url("/huge")}, make_tool_context(tmp_path),
                             WebConfig(fetch_max_bytes=4096), LOOPBACK)
    assert result.details["bytes"] == 4096 and result.details["bytesTruncated"]


async def test_fetch_follows_redirects_checking_every_hop(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/a"] = [Reply(302, "", {"Location": "/b"})]
    server.routes["/b"] = [Reply.html("<p>landed</p>")]
    result = await run_fetch({"url": server.url("/a")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK)
    assert "landed" in result.details["text"] and result.details["redirects"] == [server.url("/b")]


async def test_fetch_retries_a_503(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/p"] = [Reply(503, "busy", {"Retry-After": "2"}), Reply.html("<p>ok now</p>")]
    waits = Waits()
    result = await run_fetch({"url": server.url("/p")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK, waits)
    assert result.status == "ok" and waits == [2.0]


async def test_fetch_refuses_binary_content(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/img"] = [Reply(200, b"\x89PNG\r\n", {"Content-Type": "image/png"})]
    result = await run_fetch({"url": server.url("/img")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK)
    assert result.status == "error" and "image/png" in result.summary


async def test_fetch_of_an_error_page_is_an_error(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/gone"] = [Reply(410, "gone")]
    result = await run_fetch({"url": server.url("/gone")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK)
    assert result.status == "error" and "HTTP 410" in result.summary


async def test_fetch_pretty_prints_json(server: LoopbackServer, tmp_path: Path) -> None:
    server.routes["/j"] = [Reply.json({"a": [1, 2]})]
    result = await run_fetch({"url": server.url("/j")}, make_tool_context(tmp_path), WebConfig(), LOOPBACK)
    assert '"a": [\n    1,' in result.details["text"]


def test_fetch_spec_is_a_frequent_pure_read() -> None:
    class Bare:
        config = None

    spec = fetch_tool_spec(Bare())
    assert (spec.name, spec.resource_class.value, spec.tier.value, spec.approval_category) == \
        ("os.web.fetch", "pure_read", "frequent", None)
