"""The one browser of this process: the system Chromium driven by Playwright.

Shared at process scope (one profile per state dir, one page): calls from every session take
one lock, so one action runs at a time, and each session keeps the snapshot its own latest
call saw (its `### world`). It starts on the first call and again after a crash: a call that
finds the browser gone gets an error result and the next call gets a fresh browser.

Every request the page makes passes `_route`: a top-level navigation goes through the egress
policy (asking, during a tool call, for hosts the policy asks about; refused between calls),
every other request through the SSRF guard only, which never asks (and, once the session has
read a credential store, only to listed or approved hosts). Pop-up windows are closed
as they open, dialogs dismissed, downloads saved into the quarantine folder, never opened.
Cookies stay in the profile: no snapshot, result or trace line reads them.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.os.egress_contract import EGRESS_SERVICE, Egress

from .browser_config import BrowserConfig, browser_config
from .chromium_binary import find_chromium
from .page_snapshot import PageSnapshot, take_snapshot

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolContext

CLOSE_TIMEOUT_S = 5.0
SENSITIVE_READS = "sensitive_reads"  # the os plugin's service: which sessions read a credential store
REACHABLE_CACHE_S = 30.0
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
# how long to wait, after the browser aborted a navigation, for the download it may have become
_DOWNLOAD_GRACE_S = 1.0
POPUP_BINDING = "atomicAgentPopup"
NO_POPUPS_SCRIPT = ("(() => { const report = window." + POPUP_BINDING + "; window.open = function () { "
                    "try { report(); } catch (e) {} return null; }; })();")


class SandboxFailed(Exception):
    """Chromium did not start with its sandbox; the message names the setting."""


class BrowserGone(Exception):
    """The browser process went away during a call (crashed or was killed)."""


@attrs.define
class CallReport:
    """What happened around one call besides its own result: pop-ups, refused requests, downloads."""

    popups: int = 0
    blocked: list[str] = attrs.field(factory=list)
    downloads: list[str] = attrs.field(factory=list)
    dialogs: list[str] = attrs.field(factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.popups:
            out.append(f"{self.popups} pop-up window(s) the page opened were closed")
        if self.blocked:
            shown = "; ".join(self.blocked[:3]) + (f"; and {len(self.blocked) - 3} more" if len(self.blocked) > 3 else "")
            out.append(f"{len(self.blocked)} request(s) refused by the egress policy: {shown}")
        for path in self.downloads:
            out.append(f"a download was saved (not opened) to the quarantine folder: {path}")
        for message in self.dialogs[:3]:
            out.append(f"a dialog was dismissed: {message}")
        return out


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)
    return path


class BrowserHost:
    def __init__(self, runtime: RuntimeView) -> None:
        self._runtime = runtime
        self._lock = asyncio.Lock()
        self._playwright: Any = None
        self._context: Any = None
        self._page: Any = None
        self._gone = False
        self._worlds: dict[str, str] = {}
        # session -> host -> how many credential stores the session had read when it was approved:
        # a read after the approval takes it back (the egress policy asks again, under sensitive_egress)
        self._approved_hosts: dict[str, dict[str, int]] = {}
        self._file_session: str | None = None  # the session whose approved file: page is open
        self._reachable: dict[str, tuple[float, str | None]] = {}
        self._ctx: ToolContext | None = None
        self._tool = ""
        self._report = CallReport()
        self._last_session = ""
        self._navigations: set[Any] = set()  # main-frame navigation requests in flight
        self._saving: set[asyncio.Task[None]] = set()  # downloads being moved into the quarantine
        # a main-frame navigation that the browser itself aborted may be turning into a download,
        # whose event can come just after the request's failure: wait for it until this time
        self._download_may_follow_until = 0.0
        self._refused: set[Any] = set()  # navigations the request guard aborted (never downloads)

    # -- what other code reads -------------------------------------------------------------

    @property
    def root(self) -> Path:
        return Path(self._runtime.state_dir) / "browser"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def open_pages(self) -> int:
        """Windows the browser has open now (pop-ups are closed: 1 while it runs, 0 when not)."""
        return len(self._context.pages) if self._context is not None else 0

    def world_text(self, session_id: str) -> str | None:
        return self._worlds.get(session_id)

    def set_world(self, session_id: str, text: str) -> None:
        self._worlds[session_id] = text

    def approve_host(self, session_id: str, host: str) -> None:
        self._approved_hosts.setdefault(session_id, {})[host] = len(self._credential_reads(session_id))

    def _approved(self, session_id: str, host: str) -> bool:
        reads_then = self._approved_hosts.get(session_id, {}).get(host)
        return reads_then is not None and reads_then >= len(self._credential_reads(session_id))

    def allow_file_pages(self, session_id: str | None) -> None:
        self._file_session = session_id

    @property
    def config(self) -> BrowserConfig:
        return browser_config(self._runtime)

    @property
    def egress(self) -> Egress | None:
        """The os plugin's egress service (egress_contract.Egress), None without the os plugin."""
        egress: Egress | None = self._runtime.service(EGRESS_SERVICE, None)
        return egress

    @property
    def max_tokens(self) -> int:
        return int(self._runtime.config.agent.world_snapshot_max_tokens)

    # -- one call ---------------------------------------------------------------------------

    async def call(self, ctx: ToolContext, tool: str,
                   action: Callable[[Any, CallReport], Awaitable[str]]) -> tuple[str, CallReport]:
        """Run `action(page, report)` for `ctx`'s call under the lock; BrowserGone when the
        browser died meanwhile (it is torn down; the next call starts a new one)."""
        from playwright.async_api import Error as PlaywrightError

        async with self._lock:
            self._ctx, self._tool, self._report = ctx, tool, CallReport()
            self._last_session = ctx.session_id
            try:
                page = await self._ensure_page()
                try:
                    text = await action(page, self._report)
                except PlaywrightError as exc:
                    if self._gone or self._page_is_dead():
                        await self._teardown()
                        raise BrowserGone(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
                    raise
                return text, self._report
            finally:
                self._ctx = None

    async def snapshot(self, page: Any, measure: bool = False) -> PageSnapshot:
        return await take_snapshot(page, self.max_tokens, measure)

    def _page_is_dead(self) -> bool:
        page, context = self._page, self._context
        if page is None or page.is_closed() or context is None:
            return True
        return context.browser is not None and not context.browser.is_connected()

    async def _ensure_page(self) -> Any:
        if self._gone:
            await self._teardown()
        if self._page is not None and not self._page.is_closed():
            return self._page
        if self._context is None:
            await self._start()
        else:
            self._page = await self._context.new_page()
            self._watch_page(self._page)
        return self._page

    async def _start(self) -> None:
        from playwright.async_api import async_playwright

        from atomic_agent.api import child_environment

        config = browser_config(self._runtime)
        executable = find_chromium(config.chromium_path)  # MissingChromium before anything starts
        profile = _private_dir(self.root / "profile")
        _private_dir(self.quarantine)
        self._playwright = await async_playwright().start()
        sandboxed = config.sandbox and os.geteuid() != 0  # Chromium will not run its sandbox as root
        try:
            self._context = await self._playwright.chromium.launch_persistent_context(
                str(profile), executable_path=str(executable), headless=True, accept_downloads=True,
                chromium_sandbox=sandboxed,
                downloads_path=str(self.quarantine), service_workers="block",
                env=child_environment(environ=dict(self._runtime.environ)),
                timeout=config.navigation_timeout_s * 1000,
                args=["--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"])
        except Exception as exc:
            await self._stop_playwright()
            if sandboxed:
                raise SandboxFailed(f"Chromium did not start with its sandbox ({str(exc).splitlines()[0][:200]}); "
                                    "where user namespaces are off, set browser.sandbox to false in "
                                    "config.json") from None
            raise
        self._gone = False
        self._context.set_default_timeout(config.action_timeout_s * 1000)
        self._context.set_default_navigation_timeout(config.navigation_timeout_s * 1000)
        self._context.on("close", lambda _context: self._mark_gone())
        if self._context.browser is not None:
            self._context.browser.on("disconnected", lambda _browser: self._mark_gone())
        await self._context.route("**/*", self._route)
        await self._context.route_web_socket(lambda _url: True, self._route_socket)
        # window.open answers null before a window exists (a page opening 100 pop-ups costs nothing);
        # windows opened another way (a target=_blank link) are closed as they appear
        await self._context.expose_binding(POPUP_BINDING, self._on_popup_call)
        await self._context.add_init_script(NO_POPUPS_SCRIPT)
        pages = self._context.pages
        self._page = pages[0] if pages else await self._context.new_page()
        for extra in pages[1:]:
            await extra.close()
        self._context.on("page", self._on_new_page)
        self._watch_page(self._page)

    def _mark_gone(self) -> None:
        self._gone = True

    def _watch_page(self, page: Any) -> None:
        page.on("request", self._on_request)
        page.on("requestfinished", self._on_request_done)
        page.on("requestfailed", self._on_request_done)
        page.on("download", self._on_download)
        page.on("dialog", self._on_dialog)
        page.on("crash", lambda _page: self._mark_gone())

    def _on_popup_call(self, _source: Any, _url: Any = None) -> None:
        self._report.popups += 1

    async def _on_new_page(self, page: Any) -> None:
        if page is self._page:
            return
        self._report.popups += 1
        try:
            await page.close()
        except Exception:  # already gone
            pass

    async def _on_dialog(self, dialog: Any) -> None:
        self._report.dialogs.append(f"{dialog.type}: {dialog.message[:200]!r}")
        try:
            await dialog.dismiss()
        except Exception:
            pass

    def _on_request(self, request: Any) -> None:
        if request.is_navigation_request() and (request.frame is None or request.frame.parent_frame is None):
            self._navigations.add(request)

    def _on_request_done(self, request: Any) -> None:
        if request in self._navigations and request not in self._refused and request.failure is not None:
            self._download_may_follow_until = time.monotonic() + _DOWNLOAD_GRACE_S
        self._refused.discard(request)
        self._navigations.discard(request)

    async def settle_requests(self) -> None:
        """Wait (up to browser.actionTimeoutS) for the navigation an action started to get its
        answer and for downloads to be saved, so a call reports a download a click began."""
        deadline = time.monotonic() + self.config.action_timeout_s
        while self._navigations and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        until = min(deadline, self._download_may_follow_until)
        while not self._saving and not self._report.downloads and time.monotonic() < until:
            await asyncio.sleep(0.05)
        self._download_may_follow_until = 0.0
        if self._saving:
            await asyncio.wait(set(self._saving), timeout=max(0.1, deadline - time.monotonic()))

    def _on_download(self, download: Any) -> None:
        self._download_may_follow_until = 0.0
        task = asyncio.ensure_future(self._save_download(download))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save_download(self, download: Any) -> None:
        name = _UNSAFE_NAME.sub("_", download.suggested_filename or "download").strip("._") or "download"
        target = self.quarantine / f"{time.strftime('%Y%m%d-%H%M%S')}-{name[:100]}"
        try:
            await download.save_as(str(target))
            target.chmod(0o600)
            self._report.downloads.append(str(target))
        except Exception as exc:
            self._report.downloads.append(f"(failed: {type(exc).__name__})")

    # -- the request guard ------------------------------------------------------------------

    async def _route(self, route: Any) -> None:
        request = route.request
        url = request.url
        scheme = url.split(":", 1)[0].lower()
        try:
            reason = await self._refusal(request, url, scheme)
        except Exception as exc:  # the guard failing closes the request, never opens it
            reason = f"the request check failed ({type(exc).__name__})"
        if reason is None:
            await route.continue_()
            return
        self._report.blocked.append(f"{url[:120]} ({reason[:200]})")
        if request in self._navigations:
            self._refused.add(request)
        # a refused navigation is aborted (the page stays as it was, no error page); a refused
        # request of the page's own fails as blocked
        await route.abort("aborted" if request.is_navigation_request() else "blockedbyclient")

    async def _route_socket(self, socket: Any) -> None:
        """A WebSocket the page opens is held to the SSRF guard like its other requests."""
        url = socket.url
        checked = "http" + url[2:] if url.startswith("ws") else url
        egress = self.egress
        try:
            reason = "the os plugin's egress policy is not loaded" if egress is None else \
                await self._reachable_now(egress, checked)
        except Exception as exc:
            reason = f"the request check failed ({type(exc).__name__})"
        if reason is None:
            socket.connect_to_server()
            return
        self._report.blocked.append(f"{url[:120]} ({reason[:200]})")
        await socket.close(code=1008, reason="refused by the agent's egress policy")

    async def _refusal(self, request: Any, url: str, scheme: str) -> str | None:
        if scheme in ("data", "blob", "about"):
            return None  # made by the page itself, reaches nothing
        if scheme == "file":
            file_ok = self._file_session is not None and self._file_session == self._last_session
            return None if file_ok else "file: addresses open only through browser.open at full trust"
        if scheme not in ("http", "https"):
            return f"{scheme}: requests are not made"
        egress = self.egress
        if egress is None:
            return "the os plugin's egress policy is not loaded; enable the os plugin"
        from urllib.parse import urlsplit

        host = (urlsplit(url).hostname or "").lower().rstrip(".")
        main_frame = request.frame.parent_frame is None if request.frame is not None else True
        if request.is_navigation_request() and main_frame:
            if egress.listed(host) or self._approved(self._last_session, host):
                return await self._reachable_now(egress, url)
            if self._ctx is None:
                return f"{host} was not approved for this session; open it with browser.open"
            reason = await egress.admit_url(self._ctx, self._tool, url)
            if reason is None:
                self.approve_host(self._ctx.session_id, host)
            return reason
        reads = self._credential_reads(self._last_session)
        if reads and not egress.listed(host) and not self._approved(self._last_session, host):
            # the page's own requests could carry what the model typed into it after reading a key
            return (f"this session read {', '.join(reads)} (credentials); the page may reach only hosts in "
                    "http.allowedHosts or approved for this session")
        return await self._reachable_now(egress, url)

    def _credential_reads(self, session_id: str) -> list[str]:
        taint = self._runtime.service(SENSITIVE_READS, None)
        return list(taint.reads_of(session_id)) if taint is not None and session_id else []

    async def _reachable_now(self, egress: Egress, url: str) -> str | None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        key = f"{parts.scheme}://{parts.netloc}"
        now = time.monotonic()
        cached = self._reachable.get(key)
        if cached is not None and now - cached[0] < REACHABLE_CACHE_S:
            return cached[1]
        reason = await egress.reachable(url)
        self._reachable[key] = (now, reason)
        return reason

    # -- shutting down ----------------------------------------------------------------------

    async def close(self) -> None:
        async with self._lock:
            await self._teardown()

    async def _teardown(self) -> None:
        context, self._context, self._page = self._context, None, None
        self._reachable.clear()
        self._navigations.clear()
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), CLOSE_TIMEOUT_S)
            except Exception:  # a crashed browser may not answer; the driver stop below ends it
                pass
        await self._stop_playwright()
        self._gone = False

    async def _stop_playwright(self) -> None:
        playwright, self._playwright = self._playwright, None
        if playwright is not None:
            try:
                await asyncio.wait_for(playwright.stop(), CLOSE_TIMEOUT_S)
            except Exception:
                pass
