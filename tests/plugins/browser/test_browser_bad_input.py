"""Bad input to the browser: each a clear tool error or a report, the browser usable after,
nothing hangs — a page that never finishes loading, 100 pop-ups, a crashed browser, a
missing Chromium, a download (quarantined, never opened), a dialog (dismissed)."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

import pytest

from atomic_agent.plugins.browser.chromium_binary import MissingChromium, find_chromium

from .browser_kit import PageServer, browser_runtime, call, context, never_finishes, world


async def test_a_page_that_never_finishes_loading_is_a_timeout_error_and_the_browser_goes_on(
        pages: PageServer, tmp_path: Path) -> None:
    pages.pages["/slow"] = lambda handler: never_finishes(handler, pages.release)
    fine = pages.html("/fine", "<p>loads fine</p>")
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "browser": {"navigationTimeoutS": 2}}
    rt = await browser_runtime(tmp_path / "state", config=config)
    try:
        ctx = context(rt, tmp_path)
        slow = await call(rt, ctx, "browser.open", url=pages.url("/slow"))
        assert slow.status == "error" and "did not finish loading within 2 s" in slow.summary
        assert "browser.navigationTimeoutS" in slow.summary
        assert "what loaded so far is in ### world" in slow.summary and "Still loading" in world(rt)
        after = await call(rt, ctx, "browser.open", url=fine)
        assert after.status == "ok" and "loads fine" in world(rt)
    finally:
        await rt.close()


async def test_a_hundred_pop_ups_are_closed_and_counted(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", "<p>pop-up storm</p><script>for (let i = 0; i < 100; i++) window.open('/p' + i)</script>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        result = await call(rt, ctx, "browser.open", url=url)
        assert result.status == "ok" and "pop-up window(s) the page opened were closed" in result.summary, result.summary
        assert "pop-up storm" in world(rt)
        follow = await call(rt, ctx, "browser.snapshot")
        assert follow.status == "ok"
        assert rt.service("browser").open_pages == 1  # only the agent's own page is left
    finally:
        await rt.close()


def _chromium_processes_of_this_test() -> list[int]:
    """The Chromium processes descended from this process (the browser the test started)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [os.getpid()]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            todo.append(child)
            try:
                if "chrom" in (Path("/proc") / str(child) / "comm").read_text():
                    found.append(child)
            except OSError:
                pass
    return found


async def test_a_crashed_browser_is_an_error_result_and_the_next_call_starts_a_new_one(
        pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", "<p>before the crash</p>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        assert (await call(rt, ctx, "browser.open", url=url)).status == "ok"
        victims = _chromium_processes_of_this_test()
        assert victims
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        crashed = await call(rt, ctx, "browser.snapshot")
        assert crashed.status == "error" and "the browser stopped" in crashed.summary
        assert "browser.open" in crashed.summary and "stopped" in world(rt)
        again = await call(rt, ctx, "browser.open", url=url)
        assert again.status == "ok" and "before the crash" in world(rt)
    finally:
        await rt.close()


async def test_a_missing_chromium_is_an_error_that_says_how_to_install_it(pages: PageServer, tmp_path: Path) -> None:
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "browser": {"chromiumPath": str(tmp_path / "no-such-chromium")}}
    rt = await browser_runtime(tmp_path / "state", config=config)
    try:
        result = await call(rt, context(rt, tmp_path), "browser.open", url=pages.html("/", "<p>x</p>"))
        assert result.status == "error" and "apt-get install chromium" in result.summary
        assert "browser.chromiumPath" in result.summary and pages.hits == []
    finally:
        await rt.close()


def test_without_a_configured_path_the_search_names_what_it_looked_for(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MissingChromium, match="looked for chromium, chromium-browser.*apt-get install chromium"):
        find_chromium("")


async def test_a_download_lands_in_the_quarantine_folder_unopened(pages: PageServer, tmp_path: Path) -> None:
    def attachment(handler: object) -> None:
        body = b"#!/bin/sh\necho pwned\n"
        handler.send_response(200)  # type: ignore[attr-defined]
        handler.send_header("Content-Type", "application/octet-stream")  # type: ignore[attr-defined]
        handler.send_header("Content-Disposition", 'attachment; filename="../../evil.sh"')  # type: ignore[attr-defined]
        handler.send_header("Content-Length", str(len(body)))  # type: ignore[attr-defined]
        handler.end_headers()  # type: ignore[attr-defined]
        handler.wfile.write(body)  # type: ignore[attr-defined]

    pages.pages["/evil.sh"] = attachment
    url = pages.html("/", "<a href='/evil.sh'>get it</a>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        clicked = await call(rt, ctx, "browser.click", ref="e1")
        quarantine = tmp_path / "state" / "browser" / "quarantine"
        saved = [p for p in quarantine.iterdir() if p.name.endswith("evil.sh")]
        assert clicked.status == "ok" and "quarantine folder" in clicked.summary and len(saved) == 1
        assert saved[0].read_bytes().startswith(b"#!/bin/sh") and not saved[0].stat().st_mode & stat.S_IXUSR
        assert not (tmp_path / "evil.sh").exists()
    finally:
        await rt.close()


async def test_a_dialog_is_dismissed_and_reported(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", "<button onclick=\"alert('hello there')\">Greet</button>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        clicked = await call(rt, ctx, "browser.click", ref="e1")
        assert clicked.status == "ok" and "a dialog was dismissed: alert: 'hello there'" in clicked.summary
    finally:
        await rt.close()


async def test_an_infinite_scroll_grows_the_page_but_the_snapshot_stays_capped(pages: PageServer,
                                                                                tmp_path: Path) -> None:
    feed = """<h1>Feed</h1><div id="feed"></div><script>
    let n = 0;
    function more() { for (let i = 0; i < 200; i++) { const p = document.createElement('p');
      p.textContent = 'post ' + (n++) + ' ' + 'lorem ipsum '.repeat(5); feed.appendChild(p); } }
    more(); window.addEventListener('scroll', () => { if (innerHeight + scrollY >= document.body.scrollHeight - 50) more(); });
    </script>"""
    url = pages.html("/feed", feed)
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "agent": {"worldSnapshotMaxTokens": 1000}}
    rt = await browser_runtime(tmp_path / "state", config=config)
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        for _ in range(5):
            result = await call(rt, ctx, "browser.scroll", direction="down")
            assert result.status == "ok"
        text = world(rt)
        assert text.endswith("[truncated]") and "post 0 " in text and len(text) < 1000 * 4
    finally:
        await rt.close()


async def test_a_50_mb_page_is_snapshotted_within_the_cap(pages: PageServer, tmp_path: Path) -> None:
    paragraphs = "".join(f"<p>paragraph {i} " + "x" * 1000 + "</p>" for i in range(50_000))
    body = ("<html><body><h1>Huge</h1>" + paragraphs + "</body></html>").encode()
    assert len(body) > 50_000_000
    pages.pages["/huge"] = ("text/html", body)
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "browser": {"navigationTimeoutS": 60}}
    rt = await browser_runtime(tmp_path / "state", config=config)
    try:
        result = await call(rt, context(rt, tmp_path), "browser.open", url=pages.url("/huge"))
        assert result.status == "ok" and "snapshot truncated" in result.summary
        text = world(rt)
        assert 'heading "Huge" [level=1]' in text and text.endswith("[truncated]")
        assert len(text) <= 8000 * 4
    finally:
        await rt.close()
