"""The browser.* tools: open, snapshot, click, type, select, scroll, back, screenshot, close.

Elements are addressed by the refs of the latest snapshot (`[e12]` in `### world`), never by
selectors the model guesses. Every call that looks at the page leaves its snapshot as the
session's world; calls of one batch run one after another (resource class browser), so the
world the next step sees is the last call's. Failures are error results the turn goes on
with: a missing Chromium (how to install it), a page that does not load in time, a ref that
is gone, a browser that crashed (it starts again on the next call).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolContext, ToolResult, ToolSpec

    from .browser_host import BrowserHost, CallReport

NONWEB_CATEGORY = "browser_nonweb"
_REF = re.compile(r"^e[0-9]{1,7}$")
MAX_TYPE_CHARS = 20_000
WORLD_HINT = "the page is in ### world"

_REF_ARG = {"type": "string", "description": "an element ref from the page snapshot, e.g. \"e12\""}
SPECS: dict[str, tuple[str, dict[str, Any], str]] = {
    "browser.open": ("Open a web page in the browser; its snapshot (roles, names, refs) becomes ### world.",
                     {"url": {"type": "string", "description": "http(s) address to open"}},
                     '{"tool":"browser.open","args":{"url":"https://example.org/"}}'),
    "browser.snapshot": ("Take a fresh snapshot of the open page into ### world.", {},
                         '{"tool":"browser.snapshot","args":{}}'),
    "browser.click": ("Click an element of the page by its ref from ### world.", {"ref": _REF_ARG},
                      '{"tool":"browser.click","args":{"ref":"e3"}}'),
    "browser.type": ("Type text into a text field by its ref (replaces its value; submit presses Enter).",
                     {"ref": _REF_ARG, "text": {"type": "string"}, "submit": {"type": "boolean"}},
                     '{"tool":"browser.type","args":{"ref":"e5","text":"hello"}}'),
    "browser.select": ("Choose an option (by its label or value) in a drop-down by its ref.",
                       {"ref": _REF_ARG, "option": {"type": "string"}},
                       '{"tool":"browser.select","args":{"ref":"e7","option":"Norway"}}'),
    "browser.scroll": ("Scroll the page up or down a screen, or to an element by its ref (loads lazy content).",
                       {"direction": {"type": "string", "enum": ["down", "up"]}, "ref": _REF_ARG},
                       '{"tool":"browser.scroll","args":{"direction":"down"}}'),
    "browser.back": ("Go back to the previous page.", {}, '{"tool":"browser.back","args":{}}'),
    "browser.screenshot": ("Save a PNG screenshot of the page under the state dir; returns its path.", {},
                           '{"tool":"browser.screenshot","args":{}}'),
    "browser.close": ("Close the browser (the next browser call opens a new one).", {},
                      '{"tool":"browser.close","args":{}}'),
}
REQUIRED = {"browser.open": ["url"], "browser.click": ["ref"], "browser.type": ["ref", "text"],
            "browser.select": ["ref", "option"]}


def tool_specs(runtime: RuntimeView, host: Callable[[], BrowserHost]) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolSpec

    runners: dict[str, Callable[[BrowserHost, Mapping[str, Any], ToolContext], Awaitable[ToolResult]]] = {
        "browser.open": _open, "browser.snapshot": _snapshot, "browser.click": _click, "browser.type": _type,
        "browser.select": _select, "browser.scroll": _scroll, "browser.back": _back,
        "browser.screenshot": _screenshot, "browser.close": _close}
    specs = []
    for name, (summary, properties, example) in SPECS.items():
        schema = {"type": "object", "properties": properties, "required": REQUIRED.get(name, []),
                  "additionalProperties": False}
        specs.append(ToolSpec(name=name, summary=summary, args_schema=schema, resource_class=ResourceClass.BROWSER,
                              run=_runner(name, runners[name], host), tier=Tier.RARE, example=example,
                              durable=name in ("browser.snapshot", "browser.screenshot")))
    return specs


def _runner(name: str, run: Callable[[BrowserHost, Mapping[str, Any], ToolContext], Awaitable[ToolResult]],
            host: Callable[[], BrowserHost]) -> Any:
    async def guarded(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from playwright.async_api import Error as PlaywrightError
        from playwright.async_api import TimeoutError as PlaywrightTimeout

        from atomic_agent.api import ToolResult

        from .browser_host import BrowserGone, SandboxFailed
        from .chromium_binary import MissingChromium

        try:
            return await run(host(), args, ctx)
        except (MissingChromium, SandboxFailed) as exc:
            return ToolResult.error(f"{name}: {exc}")
        except BrowserGone as exc:
            host().set_world(ctx.session_id, "(the browser stopped; browser.open starts it again)")
            return ToolResult.error(f"{name}: the browser stopped during the call ({str(exc)[:200]}); "
                                    "it starts again on the next browser call: open the page again with browser.open")
        except PlaywrightTimeout as exc:
            return ToolResult.error(f"{name}: timed out ({str(exc).splitlines()[0][:200]}); the page may still be "
                                    "loading or the element may be covered: try browser.snapshot, or another page")
        except PlaywrightError as exc:
            return ToolResult.error(f"{name}: the browser refused: {str(exc).splitlines()[0][:300]}")

    return guarded


# -- results -------------------------------------------------------------------------------

async def _with_snapshot(host: BrowserHost, ctx: ToolContext, page: Any, report: CallReport, said: str) -> str:
    """`said`, then the snapshot as the session's world (the last call of a batch leaves its own)."""
    await host.settle_requests()
    snap = await host.snapshot(page)
    host.set_world(ctx.session_id, snap.text)
    lines = [f"{said}; {snap.refs} element(s) with refs{', snapshot truncated' if snap.truncated else ''}; "
             f"{WORLD_HINT}", *report.lines()]
    return "\n".join(lines)


def _locator(page: Any, args: Mapping[str, Any]) -> Any:
    ref = args.get("ref")
    if not isinstance(ref, str) or not _REF.match(ref):
        raise ValueError(f"ref must be an element ref from the snapshot in ### world, like \"e12\"; got {ref!r}")
    return page.locator(f'[data-atomic-ref="{ref}"]')


async def _find(page: Any, args: Mapping[str, Any]) -> Any:
    locator = _locator(page, args)
    if await locator.count() == 0:
        raise ValueError(f"no element [{args['ref']}] on the page now; refs come from the latest snapshot in "
                         "### world: call browser.snapshot if the page changed")
    return locator.first


async def _settle(page: Any, timeout_ms: int) -> None:
    """Wait briefly for what an action started (a navigation, a re-render); a page that keeps
    loading is fine: the snapshot shows what is there."""
    from playwright.async_api import Error as PlaywrightError

    try:
        await page.wait_for_load_state("load", timeout=timeout_ms)
    except PlaywrightError:
        pass


# -- the tools -----------------------------------------------------------------------------

async def _open(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    from atomic_agent.api import ToolResult

    from .url_kind import BLANK, NONWEB, BadUrl, classify

    url = args.get("url")
    try:
        kind = classify(url)
    except BadUrl as exc:
        return ToolResult.error(f"browser.open: {exc}")
    assert isinstance(url, str)
    url = url.strip()
    if kind.kind == NONWEB:
        shown = url if len(url) <= 300 else url[:300] + "…"
        if not await ctx.ask_approval(NONWEB_CATEGORY, f"browser.open {kind.scheme}: {shown}"):
            return ToolResult.error(f"browser.open: not approved: {kind.scheme}: addresses are category "
                                    f"browser_nonweb (auto-approved only at level 5, full trust)")
    elif kind.kind != BLANK:
        egress = host.egress
        if egress is None:
            return ToolResult.error("browser.open: the os plugin's egress policy is not loaded; enable the os plugin")
        reason = await egress.admit_url(ctx, "browser.open", url)
        if reason is not None:
            return ToolResult.error(f"browser.open: {reason}")
        host.approve_host(ctx.session_id, kind.host)
    timeout_s = host.config.navigation_timeout_s

    async def action(page: Any, report: CallReport) -> str:
        if kind.scheme == "javascript":
            from urllib.parse import unquote

            await page.evaluate(f"() => {{ {unquote(url.split(':', 1)[1])} }}")
            await _settle(page, 2000)
            return await _with_snapshot(host, ctx, page, report, "ran the javascript: address in the page")
        host.allow_file_pages(ctx.session_id if kind.scheme == "file" else None)
        try:
            response = await page.goto(url, wait_until="load", timeout=timeout_s * 1000)
        except PlaywrightTimeout:
            snap = ""
            try:
                snap = await _with_snapshot(host, ctx, page, report, "partial page")
            except Exception:
                pass
            raise _NotLoaded(f"{url[:200]} did not finish loading within {timeout_s} s (browser.navigationTimeoutS)"
                             + ("; what loaded so far is in ### world" if snap else "")) from None
        except Exception as exc:
            if report.blocked:
                raise _NotLoaded(f"{url[:200]} was not opened: {report.blocked[0]}") from None
            raise exc
        status = f" (HTTP {response.status})" if response is not None and response.status >= 400 else ""
        return await _with_snapshot(host, ctx, page, report, f"opened {page.url[:300]}{status}")

    return await _run(host, ctx, "browser.open", action)


class _NotLoaded(Exception):
    pass


async def _run(host: BrowserHost, ctx: ToolContext, tool: str,
               action: Callable[[Any, CallReport], Awaitable[str]]) -> ToolResult:
    from atomic_agent.api import ToolResult

    try:
        text, _report = await host.call(ctx, tool, action)
    except (ValueError, _NotLoaded) as exc:
        return ToolResult.error(f"{tool}: {exc}")
    return ToolResult.ok(text)


async def _snapshot(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    async def action(page: Any, report: CallReport) -> str:
        return await _with_snapshot(host, ctx, page, report, f"snapshot of {page.url[:300]}")

    result = await _run(host, ctx, "browser.snapshot", action)
    if result.status != "ok":
        return result
    from atomic_agent.api import ToolResult

    # the text itself in the details too: `atomic-agent tools call browser.snapshot --json` shows it
    return ToolResult.ok(result.summary, snapshot=host.world_text(ctx.session_id))


async def _click(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    async def action(page: Any, report: CallReport) -> str:
        element = await _find(page, args)
        await element.click()
        await _settle(page, 3000)
        return await _with_snapshot(host, ctx, page, report, f"clicked [{args['ref']}]; now at {page.url[:300]}")

    return await _run(host, ctx, "browser.click", action)


async def _type(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    text = args.get("text")
    if not isinstance(text, str) or len(text) > MAX_TYPE_CHARS:
        from atomic_agent.api import ToolResult

        return ToolResult.error(f"browser.type: text must be a string of at most {MAX_TYPE_CHARS} characters")

    async def action(page: Any, report: CallReport) -> str:
        element = await _find(page, args)
        await element.fill(text)
        if args.get("submit"):
            await element.press("Enter")
            await _settle(page, 3000)
        said = f"typed {len(text)} character(s) into [{args['ref']}]" + (" and pressed Enter" if args.get("submit") else "")
        return await _with_snapshot(host, ctx, page, report, said)

    return await _run(host, ctx, "browser.type", action)


async def _select(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    option = args.get("option")

    async def action(page: Any, report: CallReport) -> str:
        element = await _find(page, args)
        chosen = await element.select_option(option)
        if not chosen:
            raise ValueError(f"[{args['ref']}] has no option {option!r}; the snapshot lists its options")
        return await _with_snapshot(host, ctx, page, report, f"chose {option!r} in [{args['ref']}]")

    return await _run(host, ctx, "browser.select", action)


async def _scroll(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    direction = args.get("direction", "down")

    async def action(page: Any, report: CallReport) -> str:
        if args.get("ref") is not None:
            element = await _find(page, args)
            await element.scroll_into_view_if_needed()
            said = f"scrolled to [{args['ref']}]"
        else:
            height = (page.viewport_size or {}).get("height", 720)
            await page.mouse.wheel(0, height * 0.9 if direction == "down" else -height * 0.9)
            said = f"scrolled {direction}"
        try:  # lazy content a scroll asks for
            await page.wait_for_load_state("networkidle", timeout=1500)
        except Exception:
            pass
        return await _with_snapshot(host, ctx, page, report, said)

    return await _run(host, ctx, "browser.scroll", action)


async def _back(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    async def action(page: Any, report: CallReport) -> str:
        response = await page.go_back(wait_until="load")
        if response is None and page.url in ("about:blank", ""):
            raise ValueError("there is no earlier page to go back to")
        return await _with_snapshot(host, ctx, page, report, f"went back to {page.url[:300]}")

    return await _run(host, ctx, "browser.back", action)


async def _screenshot(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    folder = host.root / "screenshots"

    async def action(page: Any, report: CallReport) -> str:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        safe = re.sub(r"[^A-Za-z0-9_-]+", "_", ctx.session_id)[:40]
        path = folder / f"{safe}-{time.strftime('%Y%m%d-%H%M%S')}-{time.monotonic_ns() % 1_000_000:06d}.png"
        await page.screenshot(path=str(path))
        path.chmod(0o600)
        return "\n".join([f"saved a screenshot of {page.url[:300]} to {path}", *report.lines()])

    return await _run(host, ctx, "browser.screenshot", action)


async def _close(host: BrowserHost, args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    from atomic_agent.api import ToolResult

    await host.close()
    host.set_world(ctx.session_id, "(the browser is closed; browser.open starts it again)")
    return ToolResult.ok("closed the browser")
