"""The world snapshot: compact (roles, names, refs), invisible and repeated nodes dropped,
byte-stable for an unchanged page, capped with a [truncated] marker however big the page."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import estimate_tokens

from .browser_kit import PageServer, browser_runtime, call, context, world

DOCS = """<html><head><title>Guide</title><style>.gone{display:none}</style></head><body>
<nav aria-label="Site"><a href="/a">Home</a> <a href="/b">About</a></nav>
<main><h1>Install <em>it</em></h1><p>Read <b>this</b> first.</p><p>Read <b>this</b> first.</p>
<p class="gone">display none text</p><p hidden>hidden attribute text</p><div aria-hidden="true">aria hidden text</div>
<p style="visibility:hidden">invisible text</p><script>var notShown = 1;</script>
<form><label>Email <input name="e"></label><label for="pw">Password</label><input id="pw" type="password" value="hunter2">
<select aria-label="Country"><option>Norway</option><option selected>Sweden</option></select>
<input type="checkbox" aria-label="Agree" checked><button>Send</button></form></main></body></html>"""


async def test_the_snapshot_lists_roles_names_and_refs_and_drops_invisible_and_repeated_nodes(
        pages: PageServer, tmp_path: Path) -> None:
    url = pages.html("/", DOCS)
    rt = await browser_runtime(tmp_path / "state")
    try:
        result = await call(rt, context(rt, tmp_path), "browser.open", url=url)
        assert result.status == "ok", result.summary
        text = world(rt)
        assert text.splitlines()[0] == f'page "Guide" at {url}'
        for line in ('navigation "Site":', 'link "Home" [e1]', 'link "About" [e2]', 'heading "Install it" [level=1]',
                     'textbox "Email" [e3]', 'combobox "Country" [e5] value="Sweden" options: Norway | Sweden',
                     'checkbox "Agree" [e6] checked', 'button "Send" [e7]'):
            assert f"- {line}" in text, line
        assert text.count("Read this first.") == 1  # the repeated paragraph is dropped
        for gone in ("display none", "hidden attribute", "aria hidden", "invisible text", "notShown"):
            assert gone not in text
        # a password field's value is never shown, only that it has one
        assert "hunter2" not in text and 'textbox "Password" [e4] value=(7 characters, hidden)' in text
    finally:
        await rt.close()


async def test_an_unchanged_page_snapshots_to_the_same_bytes_and_keeps_its_refs(pages: PageServer,
                                                                                 tmp_path: Path) -> None:
    url = pages.html("/", DOCS)
    rt = await browser_runtime(tmp_path / "state")
    try:
        ctx = context(rt, tmp_path)
        await call(rt, ctx, "browser.open", url=url)
        first = world(rt)
        again = await call(rt, ctx, "browser.snapshot")
        assert again.status == "ok" and again.details["snapshot"] == first
        assert world(rt) == first
        # the same page loaded again walks to the same text (refs are numbered in document order)
        await call(rt, ctx, "browser.open", url=url)
        assert world(rt) == first
        # a change shows, and the refs of the elements that stayed are kept
        await call(rt, ctx, "browser.type", ref="e3", text="me@example.org")
        changed = world(rt)
        assert changed != first and 'textbox "Email" [e3] value="me@example.org"' in changed
        assert 'button "Send" [e7]' in changed
    finally:
        await rt.close()


async def test_a_page_of_100000_nodes_is_capped_with_a_truncated_marker(pages: PageServer, tmp_path: Path) -> None:
    rows = "".join(f"<tr><td>row {i}</td><td><a href='/r{i}'>open {i}</a></td></tr>" for i in range(20_000))
    url = pages.html("/big", f"<html><body><h1>Big</h1><table>{rows}</table></body></html>")
    cap = 2000
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "agent": {"worldSnapshotMaxTokens": cap}, "browser": {"navigationTimeoutS": 30}}
    rt = await browser_runtime(tmp_path / "state", config=config)
    try:
        result = await call(rt, context(rt, tmp_path), "browser.open", url=url)
        assert result.status == "ok" and "snapshot truncated" in result.summary
        text = world(rt)
        assert text.splitlines()[-1] == "[truncated]"
        assert sum(estimate_tokens(line) + 1 for line in text.splitlines()) <= cap
        assert '- row: row 0 | link "open 0" [e1]' in text and "row 19999" not in text
    finally:
        await rt.close()
