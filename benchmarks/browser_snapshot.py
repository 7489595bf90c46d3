"""How much the browser's world snapshot compresses a page: raw DOM characters and Chromium's
accessibility tree (Playwright's aria snapshot of the body) against the snapshot's characters,
on three pages served from loopback: a docs page, a form, a long table.

Usage: .venv/bin/python benchmarks/browser_snapshot.py [--rows 2000] [--sections 40] [--rounds 3]

Drives the system Chromium through the browser plugin in a runtime with the os and browser
plugins (the loopback server is allowed by explicit config, as a user would). Prints, per page:
the raw DOM chars, the aria-tree chars, the snapshot chars, both ratios, whether the snapshot
hit worldSnapshotMaxTokens (8,000 by default), and the median time of one snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from atomic_agent.api import ToolContext, runtime_for_test


def docs_page(sections: int) -> str:
    nav = "".join(f"<li><a href='/docs/{i}'>Chapter {i}: topic {i}</a></li>" for i in range(sections))
    body = "".join(
        f"<section id='s{i}'><h2>Section {i}</h2><p>This section explains <code>option_{i}</code> and how it "
        f"interacts with <a href='#s{(i + 1) % sections}'>section {(i + 1) % sections}</a>. Set it in "
        f"<em>config.json</em> before the first run.</p><pre class='code'><span class='k'>atomic-agent</span> "
        f"config set option_{i} true</pre><div class='note' style='display:none'>internal note {i}</div></section>"
        for i in range(sections))
    return (f"<html><head><title>Docs</title><style>.k{{color:red}} nav li{{list-style:none}}</style>"
            f"<script>window.analytics = {{}};</script></head><body><header><a href='/'>Home</a></header>"
            f"<nav aria-label='Chapters'><ul>{nav}</ul></nav><main><h1>User guide</h1>{body}</main>"
            f"<footer><p>Copyright</p></footer></body></html>")


def form_page(fields: int) -> str:
    countries = "".join(f"<option value='c{i}'>Country {i}</option>" for i in range(60))
    rows = "".join(
        f"<div class='row'><label for='f{i}'>Field {i}</label><input id='f{i}' name='f{i}' "
        f"placeholder='value {i}' class='input input-lg'><span class='help' hidden>help {i}</span></div>"
        for i in range(fields))
    return (f"<html><head><title>Sign up</title></head><body><form action='/done'><fieldset><legend>You</legend>"
            f"{rows}<label>Country <select name='country'>{countries}</select></label>"
            f"<label><input type='checkbox' name='terms'> I accept the terms</label></fieldset>"
            f"<button type='submit' class='btn btn-primary'>Create account</button></form></body></html>")


def table_page(rows: int) -> str:
    body = "".join(f"<tr class='r'><td class='c'>{i}</td><td class='c'>item-{i}</td><td class='c'>{i * 7 % 101}</td>"
                   f"<td class='c'><a href='/item/{i}'>details</a></td></tr>" for i in range(rows))
    return (f"<html><head><title>Inventory</title></head><body><h1>Inventory</h1><table><thead><tr><th>#</th>"
            f"<th>name</th><th>stock</th><th></th></tr></thead><tbody>{body}</tbody></table></body></html>")


class Pages:
    def __init__(self, pages: dict[str, str]) -> None:
        served = {path: text.encode() for path, text in pages.items()}

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = served.get(self.path, b"")
                self.send_response(200 if body else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"


async def measure(args: argparse.Namespace) -> int:
    pages = {"/docs": docs_page(args.sections), "/form": form_page(args.sections),
             "/table": table_page(args.rows)}
    server = Pages(pages)
    plugins = {"os": importlib.import_module("atomic_agent.plugins.os"),
               "browser": importlib.import_module("atomic_agent.plugins.browser")}
    config = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
              "browser": {"navigationTimeoutS": 60}}
    with tempfile.TemporaryDirectory() as tmp:
        rt = await runtime_for_test(Path(tmp) / "state", plugins=plugins, config=config)

        async def approve(category: str, summary: str, **_: object) -> bool:
            return True

        ctx = ToolContext(session_id="bench", working_dir=Path(tmp), state_dir=Path(tmp) / "state",
                          cancelled=asyncio.Event(), request_approval=approve)
        host = rt.service("browser")
        found: dict[str, Any] = {}

        async def look(page: Any, _report: Any) -> str:
            found["aria"] = await page.locator("body").aria_snapshot()
            found["raw"] = (await host.snapshot(page, measure=True)).raw_chars
            times = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                found["snap"] = await host.snapshot(page)
                times.append((time.perf_counter() - start) * 1000)
            found["ms"] = statistics.median(times)
            return ""

        print(f"{'page':<8} {'DOM chars':>10} {'aria chars':>10} {'snapshot':>9} {'DOM/snap':>9} "
              f"{'aria/snap':>9} {'capped':>6} {'ms/snapshot':>11}")
        try:
            for path in pages:
                opened = await rt.registry.get("browser.open").run({"url": server.url(path)}, ctx)
                if opened.status != "ok":
                    print(f"{path}: {opened.summary}", file=sys.stderr)
                    return 1
                await host.call(ctx, "benchmark", look)
                snap = found["snap"]
                chars = len(snap.text)
                print(f"{path[1:]:<8} {found['raw']:>10,} {len(found['aria']):>10,} {chars:>9,} "
                      f"{found['raw'] / chars:>9.1f} {len(found['aria']) / chars:>9.1f} "
                      f"{'yes' if snap.truncated else 'no':>6} {found['ms']:>11.1f}")
        finally:
            await rt.close()
            server.httpd.shutdown()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000, help="rows of the long table")
    parser.add_argument("--sections", type=int, default=40, help="sections of the docs page, fields of the form")
    parser.add_argument("--rounds", type=int, default=3, help="snapshots timed per page (the median is printed)")
    return asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
