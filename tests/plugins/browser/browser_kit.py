"""What the browser tests share: a real HTTP server on 127.0.0.1 serving pages, a runtime with
the os and browser plugins whose config lets the browser reach that server (explicitly: the
defaults refuse loopback), and a way to call a browser tool the way a step does."""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from atomic_agent.api import ToolContext, ToolResult, runtime_for_test
from atomic_agent.runtime.runtime import Runtime

LOOPBACK_CONFIG: dict[str, Any] = {"http": {"privateHosts": ["127.0.0.1"], "allowedHosts": ["127.0.0.1"]},
                                   "browser": {"navigationTimeoutS": 4, "actionTimeoutS": 3}}

Page = tuple[str, bytes] | Callable[[BaseHTTPRequestHandler], None]


class PageServer:
    """`pages[path]` = (content type, body), or a callable that answers the request itself."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.pages: dict[str, Page] = {}
        self.hits: list[str] = []
        self.release = threading.Event()  # set at exit: handlers that stall return
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?", 1)[0]
                server.hits.append(path)
                page = server.pages.get(path)
                if callable(page):
                    page(self)
                    return
                kind, body = page if page is not None else ("text/plain", b"not found")
                self.send_response(200 if page is not None else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer((host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def html(self, path: str, text: str) -> str:
        self.pages[path] = ("text/html; charset=utf-8", text.encode())
        return self.url(path)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self._httpd.server_address[1]}{path}"

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def never_finishes(handler: BaseHTTPRequestHandler, release: threading.Event) -> None:
    """Headers and the start of a page, then nothing until the test ends: the load never completes."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    handler.wfile.write(b"<html><body><h1>Still loading</h1>")
    handler.wfile.flush()
    release.wait(60)


def browser_plugins() -> dict[str, object]:
    return {"os": importlib.import_module("atomic_agent.plugins.os"),
            "browser": importlib.import_module("atomic_agent.plugins.browser")}


async def browser_runtime(state: Path, config: dict[str, Any] | None = None, **kwargs: Any) -> Runtime:
    return await runtime_for_test(state, plugins=browser_plugins(), config=LOOPBACK_CONFIG if config is None else config, **kwargs)


def context(rt: Runtime, working_dir: Path, session_id: str = "s1", approve: bool = True,
            asked: list[tuple[str, str]] | None = None) -> ToolContext:
    async def request_approval(category: str, summary: str, **_binding: object) -> bool:
        if asked is not None:
            asked.append((category, summary))
        return approve

    return ToolContext(session_id=session_id, working_dir=working_dir, state_dir=rt.state_dir,
                       cancelled=asyncio.Event(), request_approval=request_approval)


async def call(rt: Runtime, ctx: ToolContext, tool: str, **args: Any) -> ToolResult:
    spec = rt.registry.get(tool)
    assert spec is not None, f"{tool} is not registered"
    return await spec.run(args, ctx)


def world(rt: Runtime, session_id: str = "s1") -> str:
    text = rt.service("browser").world_text(session_id)
    assert text is not None
    return str(text)
