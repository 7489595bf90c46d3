"""The browser.* tools on loopback pages: each acts on the element its ref names and leaves the
page's new snapshot as the session's world; a wrong ref is an error the model can act on."""

from __future__ import annotations

from pathlib import Path

from .browser_kit import PageServer, browser_runtime, call, context, world

FORM = """<html><head><title>Form</title></head><body><h1>Order</h1>
<form action="/done" method="get"><input name="q" aria-label="Name">
<select name="c" aria-label="Country"><option value="no">Norway</option><option value="se">Sweden</option></select>
<button>Order</button></form><a href="/next">Next page</a></body></html>"""


async def test_click_type_select_back_and_scroll_act_by_ref(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", FORM)
    pages.html("/next", "<html><head><title>Next</title></head><body><p>second page</p></body></html>")
    pages.html("/done", "<html><head><title>Done</title></head><body><p>order placed</p></body></html>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        assert (await call(rt, ctx, "browser.open", url=url)).status == "ok"
        assert 'link "Next page" [e4]' in world(rt)
        clicked = await call(rt, ctx, "browser.click", ref="e4")
        assert clicked.status == "ok" and "now at " + pages.url("/next") in clicked.summary
        assert "second page" in world(rt)
        back = await call(rt, ctx, "browser.back")
        assert back.status == "ok" and 'heading "Order"' in world(rt)
        chosen = await call(rt, ctx, "browser.select", ref="e2", option="Sweden")
        assert chosen.status == "ok" and 'value="Sweden"' in world(rt)
        assert (await call(rt, ctx, "browser.scroll", direction="down")).status == "ok"
        typed = await call(rt, ctx, "browser.type", ref="e1", text="Ada", submit=True)
        assert typed.status == "ok" and "order placed" in world(rt)
        assert "/done?q=Ada&c=se" in world(rt).splitlines()[0]
    finally:
        await rt.close()


async def test_a_ref_that_is_not_on_the_page_is_an_error_naming_the_fix(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", FORM)
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        missing = await call(rt, ctx, "browser.click", ref="e99")
        assert missing.status == "error" and "no element [e99]" in missing.summary
        assert "browser.snapshot" in missing.summary
        bad = await call(rt, ctx, "browser.click", ref="#submit")
        assert bad.status == "error" and "like \"e12\"" in bad.summary
    finally:
        await rt.close()


async def test_a_screenshot_is_a_png_under_the_state_dir(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", FORM)
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        shot = await call(rt, ctx, "browser.screenshot")
        assert shot.status == "ok"
        path = Path(shot.summary.split(" to ", 1)[1].splitlines()[0])
        assert path.is_relative_to(tmp_path / "state" / "browser" / "screenshots")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        await rt.close()


async def test_close_ends_the_browser_and_the_next_open_starts_it_again(pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", FORM)
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        assert (await call(rt, ctx, "browser.close")).status == "ok"
        assert "closed" in world(rt)
        assert (await call(rt, ctx, "browser.open", url=url)).status == "ok"
        assert 'heading "Order"' in world(rt)
    finally:
        await rt.close()


async def test_each_session_sees_the_snapshot_of_its_own_latest_call(pages: PageServer, tmp_path: Path) -> None:
    first, second = pages.html("/1", "<p>page one</p>"), pages.html("/2", "<p>page two</p>")
    rt = await browser_runtime(tmp_path / "state")
    try:
        await call(rt, context(rt, tmp_path, "s1"), "browser.open", url=first)
        await call(rt, context(rt, tmp_path, "s2"), "browser.open", url=second)
        assert "page one" in world(rt, "s1") and "page two" in world(rt, "s2")
        assert rt.service("browser").world_text("s3") is None  # never used the browser: no world section
    finally:
        await rt.close()
