"""A real HTTP server on 127.0.0.1 that answers like the services the os tools talk to.

Tests script its answers per path (a vendor's results page, a 429 with Retry-After, a
5xx, a redirect) and read back what it received. It runs stdlib `http.server` in a
thread, so the tools under test make genuine TCP requests — and never leave loopback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.define
class Reply:
    status: int = 200
    body: bytes | str = b""
    headers: dict[str, str] = attrs.field(factory=dict)
    stall_s: float = 0.0  # sleep before answering (to provoke a client timeout)

    @classmethod
    def json(cls, value: Any, status: int = 200, **headers: str) -> Reply:
        return cls(status, json.dumps(value), {"Content-Type": "application/json", **headers})

    @classmethod
    def html(cls, text: str, status: int = 200, **headers: str) -> Reply:
        return cls(status, text, {"Content-Type": "text/html; charset=utf-8", **headers})


@attrs.frozen
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Script = list[Reply] | Callable[[Received], Reply]


class LoopbackServer:
    """`routes[path]` is a list of replies served in order (the last repeats) or a callable."""

    def __init__(self) -> None:
        self.routes: dict[str, Script] = {}
        self.received: list[Received] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                got = Received(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                reply = server._reply_for(got)
                if reply.stall_s:
                    time.sleep(reply.stall_s)
                payload = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
                try:
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def _reply_for(self, got: Received) -> Reply:
        with self._lock:
            self.received.append(got)
            script = self.routes.get(got.path.split("?", 1)[0])
            if script is None:
                return Reply(404, "no such route", {"Content-Type": "text/plain"})
            if callable(script):
                return script(got)
            return script.pop(0) if len(script) > 1 else script[0]

    def hits(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path.split("?", 1)[0] == path]

    def __enter__(self) -> LoopbackServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
