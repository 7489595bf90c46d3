"""Invariant: `serve` acts only on a request whose Host and body framing can be read one way.

A Host is a loopback literal or exactly `localhost` (or a listed name), with at most a
`:port` of digits: anything that a lax parser would read as loopback and another as a
foreign name is refused. A request whose body length two parsers could disagree on
(Content-Length with Transfer-Encoding, differing lengths, a Transfer-Encoding other than
`chunked`) is a 400 and reaches no route."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.serve.origin_policy import OriginPolicy, check_host, parse_host
from atomic_agent.plugins.serve.request_framing import framing_refusal
from atomic_agent.plugins.serve.request_guard import RequestGuard
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

OPEN = OriginPolicy.of((), (), keyed=False)

LOOPBACK = ["127.0.0.1", "localhost", "LocalHost", "[::1]", "127.0.0.1:8765", "localhost:1", "[::1]:65535",
            "127.1.2.3", "[0:0:0:0:0:0:0:1]:80"]
NOT_LOOPBACK = [
    "[::1]evil.example", "[::1].evil.example", "[::1]:80evil", "[::1]:80:81", "[::1]@evil.example",
    "localhost.", "localhost..", "127.0.0.1.", "localhost:", "localhost:+80", "localhost:0", "localhost:65536",
    "localhost:８０", "localhost :80", " localhost", "localhost@evil.example", "user:pw@localhost",
    "evil.example@localhost", "localhost#@evil", "localhost/evil", "localhost\\evil", "localhost%00",
    "::1", "[::1", "::1]", "[::ffff:127.0.0.1]x", "[fe80::1%25lo]", "127.1", "2130706433", "0x7f000001",
    "0177.0.0.1", "127.0.0.01", "localhost.localdomain", "ip6-localhost", "locaIhost", "ｌocalhost",
    "localhost,evil.example", "evil.example", "[::2]", "128.0.0.1", "",
]


@pytest.mark.parametrize("host", LOOPBACK)
def test_loopback_hosts_pass(host: str):
    assert parse_host(host) is not None and check_host(OPEN, host) is None


@pytest.mark.parametrize("host", NOT_LOOPBACK)
def test_every_other_host_spelling_is_refused(host: str):
    refusal = check_host(OPEN, host)
    assert refusal is not None and refusal.status in (400, 403), host
    assert refusal.code in ("invalid_host", "host_not_allowed", "host_required")


def test_a_listed_name_passes_only_exactly():
    listed = OriginPolicy.of(("agent.lan",), (), keyed=False)
    assert check_host(listed, "agent.lan:8765") is None and check_host(listed, "AGENT.lan") is None
    for near in ("agent.lan.", "agent.lan.evil", "x.agent.lan", "agent.lan@evil", "[::1]agent.lan"):
        assert check_host(listed, near) is not None, near


def test_a_keyed_server_still_refuses_a_malformed_host():
    keyed = OriginPolicy.of((), (), keyed=True)
    assert check_host(keyed, "evil.example") is None  # the key is the boundary for names
    assert check_host(keyed, "[::1]evil.example") is not None


H = [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json")]
AMBIGUOUS = [
    [(b"content-length", b"2"), (b"transfer-encoding", b"chunked")],
    [(b"transfer-encoding", b"chunked"), (b"content-length", b"0")],
    [(b"content-length", b"2"), (b"content-length", b"3")],
    [(b"content-length", b"2, 3")],
    [(b"content-length", b"+2")],
    [(b"content-length", b"0x2")],
    [(b"content-length", b"-1")],
    [(b"transfer-encoding", b"gzip, chunked")],
    [(b"transfer-encoding", b"chunked, chunked")],
    [(b"transfer-encoding", b"chunked"), (b"transfer-encoding", b"chunked")],
    [(b"transfer-encoding", b"xchunked")],
    [(b"transfer-encoding", b"identity")],
    [(b"host", b"localhost")],  # a second Host
]


@pytest.mark.parametrize("extra", AMBIGUOUS)
def test_ambiguous_framing_is_refused_by_the_guard(extra: list[tuple[bytes, bytes]]):
    assert framing_refusal(H + extra) is not None
    reached: list[bool] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        reached.append(True)

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    scope = {"type": "http", "method": "POST", "path": "/api/sessions", "headers": H + extra}
    asyncio.run(RequestGuard(app, OPEN)(scope, receive, send))
    assert not reached and sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["error"]["code"] == "ambiguous_framing"


@pytest.mark.parametrize("extra", [[(b"content-length", b"2")], [(b"transfer-encoding", b"chunked")],
                                   [(b"Transfer-Encoding", b"Chunked")], [(b"content-length", b"2"),
                                                                          (b"content-length", b"2")], []])
def test_plain_framing_passes(extra: list[tuple[bytes, bytes]]):
    assert framing_refusal(H + extra) is None


def _raw(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT_S) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _request(host: bytes, framing: bytes, body: bytes) -> bytes:
    return (b"POST /api/sessions HTTP/1.1\r\nHost: " + host + b"\r\nContent-Type: application/json\r\n" + framing
            + b"Connection: close\r\n\r\n" + body)


CHUNKED_BODY = b"2\r\n{}\r\n0\r\n\r\n"


@pytest.mark.parametrize("request_bytes", [
    _request(b"127.0.0.1", b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", CHUNKED_BODY),
    _request(b"127.0.0.1", b"Content-Length: 2\r\nContent-Length: 3\r\n", b"{} "),
    _request(b"127.0.0.1", b"Transfer-Encoding: gzip, chunked\r\n", CHUNKED_BODY),
    _request(b"[::1]evil.example", b"Content-Length: 2\r\n", b"{}"),
    _request(b"localhost.", b"Content-Length: 2\r\n", b"{}"),
])
def test_on_the_wire_an_ambiguous_request_creates_nothing(tmp_path: Path, request_bytes: bytes):
    serve = ServeHarness(tmp_path, ScriptedProvider())
    try:
        answer = _raw(serve.port, request_bytes)
        status = int(answer.split(b" ", 2)[1]) if answer else 400  # a server may also just close the connection
        assert status == 400, answer[:300]
        assert serve.call(lambda: serve.runtime.sessions.list(limit=10)) == []
    finally:
        serve.stop()
