"""A real HTTP server on 127.0.0.1 that answers like an OpenAI-style vendor, from a script.

Each request takes the next scripted `Reply` (the last one repeats). A reply is a JSON
body, or SSE lines; `cut_after` closes the connection after that many SSE lines without
finishing, the way a dropped stream looks to a client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs


@attrs.frozen
class Reply:
    status: int = 200
    body: Any = None  # dict/list -> JSON, str -> as is
    headers: dict[str, str] = attrs.field(factory=dict)
    sse: Sequence[str] | None = None  # payloads of `data:` lines, in order
    cut_after: int | None = None


@attrs.define
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


def chat_reply(content: str = "hi", tool_calls: list[dict[str, Any]] | None = None, finish: str = "stop",
               usage: dict[str, Any] | None = None) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return Reply(200, {"id": "chatcmpl-1", "object": "chat.completion", "choices": [
        {"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})


def sse_chunks(pieces: Sequence[str], usage: dict[str, Any] | None = None, finish: str = "stop") -> list[str]:
    lines = [json.dumps({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                      "finish_reason": None}]})]
    lines += [json.dumps({"choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]})
              for p in pieces]
    lines.append(json.dumps({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}))
    if usage is not None:
        lines.append(json.dumps({"choices": [], "usage": usage}))
    lines.append("[DONE]")
    return lines


class VendorServer:
    def __init__(self, replies: Sequence[Reply] = ()) -> None:
        self.replies: list[Reply] = list(replies) or [chat_reply()]
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    parsed: Any = json.loads(raw) if raw else None
                except ValueError:
                    parsed = raw.decode("utf-8", "replace")
                with server._lock:
                    server.seen.append(Seen(self.command, self.path, dict(self.headers), parsed))
                    reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                server._send(self, reply)

            do_POST = _handle
            do_GET = _handle

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies = list(replies)
            self.seen.clear()

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.sse is not None:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Connection", "close")
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            for n, payload in enumerate(reply.sse):
                if reply.cut_after is not None and n >= reply.cut_after:
                    break
                handler.wfile.write(f"data: {payload}\n\n".encode())
                handler.wfile.flush()
            handler.close_connection = True
            return
        body = reply.body if isinstance(reply.body, str) else json.dumps(reply.body if reply.body is not None else {})
        data = body.encode()
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json" if not isinstance(reply.body, str) else "text/plain")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def start(self) -> VendorServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@contextmanager
def vendor_server(*replies: Reply) -> Iterator[VendorServer]:
    server = VendorServer(replies).start()
    try:
        yield server
    finally:
        server.stop()
