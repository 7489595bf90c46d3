"""The browser goes through the egress policy: loopback and private addresses are refused
unless config lists them, unknown hosts ask under `http`, file: and javascript: ask under
browser_nonweb (level 5), and what the page requests on its own is held to the SSRF guard."""

from __future__ import annotations

import asyncio
from pathlib import Path

from .browser_kit import PageServer, browser_runtime, call, context, world

WAIT_S = 30.0  # a hung-test net, never a speed expectation
PRIVATE_ONLY = {"http": {"privateHosts": ["127.0.0.1", "localhost"]}, "browser": {"navigationTimeoutS": 4}}


async def test_by_default_loopback_is_refused_and_the_error_names_the_setting(pages: PageServer,
                                                                               tmp_path: Path) -> None:
    url = pages.html("/", "<p>local</p>")
    rt = await browser_runtime(tmp_path / "state", config={})
    try:
        result = await call(rt, context(rt, tmp_path), "browser.open", url=url)
        assert result.status == "error" and "loopback" in result.summary and "http.privateHosts" in result.summary
        assert pages.hits == []
    finally:
        await rt.close()


async def test_an_unlisted_host_asks_under_http_and_a_no_sends_nothing(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", "<p>asked first</p>").replace("127.0.0.1", "localhost")
    rt = await browser_runtime(tmp_path / "state", config=PRIVATE_ONLY)
    try:
        asked: list[tuple[str, str]] = []
        denied = await call(rt, context(rt, tmp_path, approve=False, asked=asked), "browser.open", url=url)
        assert denied.status == "error" and "not approved" in denied.summary
        assert [c for c, _ in asked] == ["http"] and url in asked[0][1] and pages.hits == []
        approved = await call(rt, context(rt, tmp_path, asked=asked), "browser.open", url=url)
        assert approved.status == "ok" and "asked first" in world(rt)
    finally:
        await rt.close()


async def test_file_and_javascript_addresses_ask_under_browser_nonweb(pages: PageServer, tmp_path: Path) -> None:
    local = tmp_path / "note.html"
    local.write_text("<p>a local file</p>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        asked: list[tuple[str, str]] = []
        denied = await call(rt, context(rt, tmp_path, approve=False, asked=asked), "browser.open",
                            url=local.as_uri())
        assert denied.status == "error" and "browser_nonweb" in denied.summary and "level 5" in denied.summary
        opened = await call(rt, context(rt, tmp_path, asked=asked), "browser.open", url=local.as_uri())
        assert opened.status == "ok" and "a local file" in world(rt)
        ran = await call(rt, context(rt, tmp_path, asked=asked), "browser.open",
                         url="javascript:document.body.innerHTML='<p>scripted</p>'")
        assert ran.status == "ok" and "scripted" in world(rt)
        assert [c for c, _ in asked] == ["browser_nonweb"] * 3
        refused = await call(rt, context(rt, tmp_path, asked=asked), "browser.open", url="data:text/html,<p>x</p>")
        assert refused.status == "error" and "data: URLs are not opened" in refused.summary and len(asked) == 3
    finally:
        await rt.close()


async def test_what_the_page_requests_itself_is_held_to_the_ssrf_guard(pages: PageServer, tmp_path: Path) -> None:
    with PageServer("127.0.0.2") as other:
        other.pages["/pixel.png"] = ("image/png", b"\x89PNG")
        url = pages.html("/", f"<p>with an image</p><img alt='pixel' src='{other.url('/pixel.png')}'>")
        rt = await browser_runtime(tmp_path / "state")
        try:
            result = await call(rt, context(rt, tmp_path), "browser.open", url=url)
            assert result.status == "ok" and "refused by the egress policy" in result.summary
            assert "127.0.0.2" in result.summary and other.hits == []
        finally:
            await rt.close()


async def test_a_navigation_the_page_starts_between_calls_goes_only_to_approved_hosts(
        pages: PageServer, tmp_path: Path) -> None:
    with PageServer("127.0.0.2") as other:
        target = other.html("/", "<p>elsewhere</p>")
        url = pages.html("/", f"<p>redirecting soon</p><script>setTimeout(() => location = '{target}', 1000)</script>")
        config = {"http": {"privateHosts": ["127.0.0.1", "127.0.0.2"], "allowedHosts": ["127.0.0.1"]},
                  "browser": {"navigationTimeoutS": 4}}
        rt = await browser_runtime(tmp_path / "state", config=config)
        try:
            ctx = context(rt, tmp_path)
            opened = await call(rt, ctx, "browser.open", url=url)
            assert opened.status == "ok", opened.summary
            await asyncio.sleep(2.5)  # the page's timer fires while no call runs: nobody can be asked
            await call(rt, ctx, "browser.snapshot")
            assert other.hits == [] and "elsewhere" not in world(rt) and "redirecting soon" in world(rt)
        finally:
            await rt.close()


async def test_a_websocket_to_a_refused_address_is_closed_before_it_connects(pages: PageServer,
                                                                             tmp_path: Path) -> None:
    with PageServer("127.0.0.2") as other:
        script = (f"<p id='state'>waiting</p><script>const s = new WebSocket('{other.url('/ws').replace('http', 'ws')}');"
                  "s.onclose = () => document.getElementById('state').textContent = 'socket closed';</script>")
        url = pages.html("/", script)
        rt = await browser_runtime(tmp_path / "state")
        try:
            ctx = context(rt, tmp_path)
            await call(rt, ctx, "browser.open", url=url)
            deadline = asyncio.get_running_loop().time() + WAIT_S
            while "socket closed" not in world(rt):  # the page's onclose has run
                assert asyncio.get_running_loop().time() < deadline, world(rt)
                await asyncio.sleep(0.05)
                await call(rt, ctx, "browser.snapshot")
            assert other.hits == []
        finally:
            await rt.close()


async def test_after_a_credential_read_the_page_reaches_only_listed_or_approved_hosts(pages: PageServer,
                                                                                      tmp_path: Path) -> None:
    with PageServer("127.0.0.2") as other:
        other.pages["/pixel.png"] = ("image/png", b"\x89PNG")
        url = pages.html("/", f"<p>tracking</p><img alt='pixel' src='{other.url('/pixel.png')}'>")
        config = {"http": {"privateHosts": ["127.0.0.1", "127.0.0.2"], "allowedHosts": ["127.0.0.1"]},
                  "browser": {"navigationTimeoutS": 4}}
        rt = await browser_runtime(tmp_path / "state", config=config)
        try:
            clean = await call(rt, context(rt, tmp_path, "clean"), "browser.open", url=url)
            assert clean.status == "ok" and other.hits == ["/pixel.png"]
            # the session approved 127.0.0.2 (asked under http) before it read a credential store
            asked: list[tuple[str, str]] = []
            other.html("/", "<p>the other host</p>")
            before = await call(rt, context(rt, tmp_path, "tainted", asked=asked), "browser.open", url=other.url("/"))
            assert before.status == "ok" and [c for c, _ in asked] == ["http"]
            rt.service("sensitive_reads").mark("tainted", "~/.aws/credentials")
            tainted = await call(rt, context(rt, tmp_path, "tainted"), "browser.open", url=url + "?again")
            assert tainted.status == "ok" and "read ~/.aws/credentials (credentials)" in tainted.summary
            assert other.hits.count("/pixel.png") == 1
            # going there again asks under sensitive_egress: the earlier approval no longer holds
            again = await call(rt, context(rt, tmp_path, "tainted", approve=False, asked=asked), "browser.open",
                               url=other.url("/"))
            assert again.status == "error" and asked[-1][0] == "sensitive_egress"
        finally:
            await rt.close()
