"""A fake Telegram Bot API: a real HTTP server on loopback, driven by tests as a phone.

It implements what the channel calls (getMe, getUpdates with offset and long-poll
timeout, sendMessage, editMessageText, answerCallbackQuery, setMyCommands) with Telegram's
error answers: 401 for a wrong or revoked token, 409 when a second getUpdates overlaps a
running one, 400 "can't parse entities" for HTML it cannot parse, 400 for a text over
4,096 UTF-16 units, and scripted 429 (`retry_after`) / 5xx answers. Updates below the
offset a getUpdates passes are forgotten, exactly like Telegram.

Tests queue what the phone sends (`send_text`, `press`, `queue_update`) and read what the
bot sent (`sent`, `edits`, `callback_answers`). `hold_sends()` makes sendMessage wait
(after recording that it arrived) until `release_sends()`, so a test can kill the bot
mid-send.
"""

from __future__ import annotations

import html.parser
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

BOT_ID = 777000111
TOKEN = "123456789:TEST-token_abcdefghijklmnopqrstuv"
ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a", "blockquote",
                "tg-spoiler", "span"}


def utf16_units(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class _HtmlCheck(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.error: str | None = None

    def handle_starttag(self, tag: str, attrs_: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.error = self.error or f"unsupported start tag \"{tag}\""
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.error = self.error or f"can't find end tag corresponding to start tag \"{tag}\""
        else:
            self.stack.pop()


def visible_text(text: str, parse_mode: str | None) -> str:
    """What Telegram counts against the 4,096 limit: the text after entity parsing."""
    if parse_mode != "HTML":
        return text
    import html
    import re

    return html.unescape(re.sub(r"<[^>]*>", "", text))


def html_problem(text: str) -> str | None:
    checker = _HtmlCheck()
    checker.feed(text)
    checker.close()
    if checker.error:
        return checker.error
    if checker.stack:
        return f"can't find end tag corresponding to start tag \"{checker.stack[-1]}\""
    return None


@attrs.define
class SentMessage:
    chat_id: int
    text: str
    parse_mode: str | None
    message_id: int
    reply_markup: dict[str, Any] | None = None


class FakeBotApi:
    def __init__(self, token: str = TOKEN, port: int = 0) -> None:
        self.token = token
        self.revoked = False
        self._cond = threading.Condition()
        self._updates: list[dict[str, Any]] = []
        self._next_update_id = 1000
        self._next_message_id = 1
        self.confirmed_offset = 0
        self.sent: list[SentMessage] = []
        self.send_attempts: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.callback_answers: list[dict[str, Any]] = []
        self.commands: list[dict[str, Any]] = []
        self.calls: list[str] = []
        self.scripted_send_errors: list[tuple[int, str, float | None]] = []
        self.server_errors_on_poll = 0
        self.poll_conflicts = 0  # getUpdates refused with 409: two pollers overlapped
        self._polling = 0
        self._hold = False
        self.held = threading.Event()
        self._connections: set[Any] = set()
        self._closed = False
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler_class())
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, client_address: None  # a killed client resets its sockets
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeBotApi:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop like a lost network: the listening socket and every open connection go."""
        import socket

        self._closed = True
        self.release_sends()
        self._server.shutdown()
        self._server.server_close()
        with self._cond:
            for conn in list(self._connections):
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self._cond.notify_all()

    # -- the phone -------------------------------------------------------------------------------
    def queue_update(self, update: dict[str, Any]) -> int:
        with self._cond:
            update_id = self._next_update_id
            self._next_update_id += 1
            self._updates.append({"update_id": update_id, **update})
            self._cond.notify_all()
            return update_id

    def send_text(self, user_id: int, text: str, chat_type: str = "private") -> int:
        chat_id = user_id if chat_type == "private" else -100 - user_id
        return self.queue_update({"message": {"message_id": self._next_update_id, "date": int(time.time()),
                                              "from": {"id": user_id, "is_bot": False, "first_name": "Phone"},
                                              "chat": {"id": chat_id, "type": chat_type}, "text": text}})

    def press(self, user_id: int, data: str, message_id: int = 0) -> int:
        return self.queue_update({"callback_query": {"id": f"cb{self._next_update_id}",
                                                     "from": {"id": user_id, "is_bot": False},
                                                     "message": {"message_id": message_id,
                                                                 "chat": {"id": user_id, "type": "private"}},
                                                     "data": data}})

    def keyboards(self) -> list[SentMessage]:
        return [m for m in self.sent if m.reply_markup and m.reply_markup.get("inline_keyboard")]

    # -- scripted faults ------------------------------------------------------------------------
    def fail_next_sends(self, *errors: tuple[int, str, float | None]) -> None:
        with self._cond:
            self.scripted_send_errors.extend(errors)

    def hold_sends(self) -> None:
        self._hold = True

    def release_sends(self) -> None:
        self._hold = False
        with self._cond:
            self._cond.notify_all()

    def revoke(self) -> None:
        self.revoked = True

    # -- waiting -------------------------------------------------------------------------------
    def wait_until(self, predicate: Callable[[], bool], timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the fake Bot API did not see it within {timeout_s} s; sent so far: "
                                         f"{[m.text[:80] for m in self.sent]}")
                self._cond.wait(min(left, 0.2))

    def texts(self, chat_id: int | None = None) -> list[str]:
        return [m.text for m in self.sent if chat_id is None or m.chat_id == chat_id]

    # -- HTTP ----------------------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                return None

            def setup(self) -> None:
                super().setup()
                with api._cond:
                    api._connections.add(self.connection)

            def finish(self) -> None:
                with api._cond:
                    api._connections.discard(self.connection)
                super().finish()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    payload = json.loads(raw or b"{}")
                except ValueError:
                    payload = {}
                status, body = api._dispatch(self.path, payload)
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        return Handler

    def _dispatch(self, path: str, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        prefix, _, method = path.lstrip("/").partition("/")
        if prefix != f"bot{self.token}" or self.revoked:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        with self._cond:
            self.calls.append(method)
            self._cond.notify_all()
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return 404, {"ok": False, "error_code": 404, "description": "Not Found: method not found"}
        return handler(payload)

    @staticmethod
    def _ok(result: Any) -> tuple[int, dict[str, Any]]:
        return 200, {"ok": True, "result": result}

    @staticmethod
    def _error(status: int, description: str, retry_after: float | None = None) -> tuple[int, dict[str, Any]]:
        body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
        if retry_after is not None:
            body["parameters"] = {"retry_after": retry_after}
        return status, body

    def _m_getMe(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        return self._ok({"id": BOT_ID, "is_bot": True, "first_name": "Atomic", "username": "atomic_test_bot"})

    def _m_setMyCommands(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.commands = list(payload.get("commands", []))
        return self._ok(True)

    def _m_getUpdates(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        offset = payload.get("offset")
        timeout = min(float(payload.get("timeout", 0) or 0), 5.0)
        with self._cond:
            if self.server_errors_on_poll > 0:
                self.server_errors_on_poll -= 1
                return self._error(502, "Bad Gateway")
            if self._polling:
                self.poll_conflicts += 1
                return self._error(409, "Conflict: terminated by other getUpdates request; make sure that only "
                                        "one bot instance is running")
            self._polling += 1
            try:
                if isinstance(offset, int):
                    self.confirmed_offset = max(self.confirmed_offset, offset)
                    self._updates = [u for u in self._updates if u["update_id"] >= offset]
                deadline = time.monotonic() + timeout
                while not self._updates and not self.revoked and not self._closed:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                return self._ok(list(self._updates[:100]))
            finally:
                self._polling -= 1

    def _m_sendMessage(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        text = str(payload.get("text", ""))
        with self._cond:
            self.send_attempts.append(dict(payload))
            self._cond.notify_all()
            if self.scripted_send_errors:
                status, description, retry_after = self.scripted_send_errors.pop(0)
                return self._error(status, description, retry_after)
        if not text:
            return self._error(400, "Bad Request: message text is empty")
        if utf16_units(visible_text(text, payload.get("parse_mode"))) > 4096:
            return self._error(400, "Bad Request: message is too long")
        if payload.get("parse_mode") == "HTML":
            problem = html_problem(text)
            if problem:
                return self._error(400, f"Bad Request: can't parse entities: {problem}")
        with self._cond:
            if self._hold:
                self.held.set()
                while self._hold:
                    self._cond.wait(0.2)
            message = SentMessage(int(payload.get("chat_id", 0)), text, payload.get("parse_mode"),
                                  self._next_message_id, payload.get("reply_markup"))
            self._next_message_id += 1
            self.sent.append(message)
            self._cond.notify_all()
        return self._ok({"message_id": message.message_id, "chat": {"id": message.chat_id}, "text": text})

    def _m_editMessageText(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._cond:
            self.edits.append(dict(payload))
            self._cond.notify_all()
        return self._ok({"message_id": payload.get("message_id")})

    def _m_answerCallbackQuery(self, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._cond:
            self.callback_answers.append(dict(payload))
            self._cond.notify_all()
        return self._ok(True)
