"""The HTTP side of FakeLlamaServer: routes, JSON and chunked-SSE answers, faults, drops."""

from __future__ import annotations

import json
import socket
import time
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from .fake_llama_script import (
    Delay,
    DropConnection,
    HttpFault,
    RecordedRequest,
    RefusedRequest,
    Reply,
    Stall,
    fake_tokenize,
)

if TYPE_CHECKING:
    from .fake_llama_server import FakeLlamaServer


class FakeLlamaHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked SSE, like llama-server
    timeout = 30  # an idle keep-alive connection must not pin a thread forever
    # headers and body go out in separate writes: with Nagle on, the second waited ~40 ms for the
    # client's delayed ACK, which every benchmark on the fake measured instead of the runtime
    disable_nagle_algorithm = True
    fake: FakeLlamaServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else {}
        except ValueError:
            self.fake.requests.append(RecordedRequest(method, self.path, raw.decode("utf-8", "replace")))
            return self._error(HttpFault(400, "invalid JSON in request body", "invalid_request_error"))
        self.fake.requests.append(RecordedRequest(method, self.path, body))
        fake = self.fake
        if fake.loading:
            return self._error(HttpFault.loading())
        path = self.path.split("?", 1)[0]
        if method == "GET" and path in ("/health", "/v1/health"):
            return self._json(200, {"status": "ok"})
        if method == "GET" and path == "/props":
            return self._json(200, fake.props())
        if method == "GET" and path == "/v1/models" and fake.models_route:
            return self._json(200, fake.models())
        if method == "GET" and path == "/slots":
            return self._json(200, fake.slots())
        if method == "POST" and path == "/tokenize":
            return self._json(200, fake.tokenize(body))
        if method == "POST" and path == "/completion":
            if not isinstance(body, dict):
                return self._error(HttpFault(400, "the request body must be a JSON object", "invalid_request_error"))
            return self._completion(body)
        if method == "POST" and path == "/v1/chat/completions":
            return self._image_chat(body)
        return self._error(HttpFault(404, "File Not Found", "not_found_error"))

    def _image_chat(self, body: Any) -> None:
        from .fake_image_chat import image_answer, image_request_problem

        fake = self.fake
        if not fake.vision:  # what a server started without --mmproj says
            return self._error(HttpFault(500, "image input is not supported - hint: if this is unexpected, you may "
                                              "need to provide the mmproj", "server_error"))
        problem, seen = image_request_problem(body, require_thinking_off=fake.require_thinking_off)
        if problem is not None:
            return self._error(HttpFault(400, problem, "invalid_request_error"))
        return self._json(200, image_answer(fake.vision_reply, seen, fake.model_alias))

    def _completion(self, body: dict[str, Any]) -> None:
        item = self.fake._next_item()
        if isinstance(item, Delay):
            time.sleep(item.seconds)
            item = item.then if item.then is not None else self.fake.default_reply
            if isinstance(item, Delay):
                raise TypeError("a Delay is followed by another Delay (its default reply); give it a `then`")
        if isinstance(item, HttpFault):
            return self._error(item)
        stream = bool(body.get("stream", False))
        if isinstance(item, DropConnection) and (item.after_chunks == 0 or not stream):
            return self._drop()
        if isinstance(item, Stall) and not stream:
            time.sleep(item.seconds)
        reply = Reply(item) if isinstance(item, str) else item if isinstance(item, Reply) else Reply(item.content)
        try:
            pieces, final = self.fake.run_completion(body, reply)
        except RefusedRequest as refused:
            return self._error(refused.fault)
        if not stream:
            return self._json(200, final)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        n_prompt = final["tokens_evaluated"]
        for i, piece in enumerate(pieces):
            if isinstance(item, DropConnection) and i >= item.after_chunks:
                return self._drop()
            if isinstance(item, Stall) and i == item.after_chunks:
                time.sleep(item.seconds)
            self._event({"index": 0, "content": piece, "tokens": fake_tokenize(piece), "stop": False,
                         "id_slot": -1, "tokens_predicted": i + 1, "tokens_evaluated": n_prompt})
        if isinstance(item, DropConnection):
            return self._drop()
        self._event({**final, "content": ""})
        self.wfile.write(b"0\r\n\r\n")  # end of the chunked body; no [DONE] on /completion

    def _event(self, payload: dict[str, Any]) -> None:
        data = b"data: " + json.dumps(payload).encode() + b"\n\n"
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _json(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, fault: HttpFault) -> None:
        self._json(fault.status, fault.body())

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
