"""`serve` against web pages and other clients: raw HTTP (exact headers) and the openai client,
on a real loopback port (uvicorn + the serve app + a scripted runtime).

A web page can make the browser send requests to 127.0.0.1 with a foreign Origin, a
`text/plain` body (no preflight), or — after DNS rebinding — a foreign Host. None of them
may reach a route. Approvals are answered only by the turn's own client or the operator.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

GATED = [calls(("t.gated", {"path": "ls"})), calls(("reply", {"text": "listed"}))]
CLIENT_A = "client-a-0123456789abcdef"
CLIENT_B = "client-b-0123456789abcdef"
OPERATOR = "operator-token-" + "f" * 48


def raw(serve: ServeHarness, method: str, path: str, headers: dict[str, str], body: bytes | None = None,
        host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """One request with exactly these headers (http.client lets the Host header be anything)."""
    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=WAIT_S)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{serve.port}")
        for key, value in headers.items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


@pytest.fixture()
def serve(tmp_path: Path) -> Iterator[ServeHarness]:
    harness = ServeHarness(tmp_path, ScriptedProvider(GATED * 4), operator_token=OPERATOR)
    yield harness
    harness.stop()


def sessions_on_disk(serve: ServeHarness) -> int:
    return len(serve.call(lambda: serve.runtime.sessions.list(limit=1000)))


JSON = {"Content-Type": "application/json"}
FOREIGN_HOSTS = ["evil.example", "evil.example:8765", "127.0.0.1.nip.io", "localhost.evil.example", "attacker",
                 "2130706433", "[::ffff:7f00:1]", "0x7f.1", "example.com:80", "127.0.0.2.evil.example",
                 "localhost@evil.example"]


@pytest.mark.parametrize("host", FOREIGN_HOSTS)
@pytest.mark.parametrize(("method", "path", "body"), [
    ("GET", "/v1/models", None), ("POST", "/api/sessions", b"{}"), ("GET", "/api/approvals", None),
    ("POST", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()),
    ("POST", "/api/approvals/apr_x", b'{"approved": true}'), ("GET", "/api/events", None),
])
def test_dns_rebinding_a_foreign_host_name_reaches_no_route(serve, host, method, path, body):
    status, _, payload = raw(serve, method, path, JSON if body else {}, body, host=host)
    # a foreign name is 403; a Host that is not a plain host[:port] at all is 400 (see test_serve_host_and_framing)
    assert (status, json.loads(payload)["error"]["code"]) in ((403, "host_not_allowed"), (400, "invalid_host"))
    assert sessions_on_disk(serve) == 0


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]", "127.0.0.1:{port}",
                                  "localhost:{port}", "[::1]:{port}", "127.1.2.3"])
def test_loopback_host_names_are_served(serve, host):
    status, _, _ = raw(serve, "GET", "/v1/models", {}, host=host.format(port=serve.port))
    assert status == 200


def test_an_operator_listed_host_name_is_served(tmp_path: Path):
    harness = ServeHarness(tmp_path, ScriptedProvider(), allowed_hosts=("agent.lan",))
    try:
        assert raw(harness, "GET", "/v1/models", {}, host="agent.lan:8765")[0] == 200
        assert raw(harness, "GET", "/v1/models", {}, host="other.lan")[0] == 403
    finally:
        harness.stop()


FOREIGN_ORIGINS = ["http://evil.example", "https://evil.example", "null", "http://localhost:3000",
                   "http://127.0.0.1:1", "file://", "http://127.0.0.1.nip.io"]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
@pytest.mark.parametrize(("method", "path", "body"), [
    ("POST", "/api/sessions", b"{}"), ("GET", "/v1/models", None), ("GET", "/api/approvals", None),
    ("POST", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()),
])
def test_a_foreign_origin_is_refused_on_every_route(serve, origin, method, path, body):
    status, headers, payload = raw(serve, method, path, {"Origin": origin, **(JSON if body else {})}, body)
    assert status == 403 and json.loads(payload)["error"]["code"] == "origin_not_allowed"
    assert "access-control-allow-origin" not in headers and sessions_on_disk(serve) == 0


def test_the_servers_own_origin_is_served(serve):
    own = f"http://127.0.0.1:{serve.port}"
    status, _, _ = raw(serve, "POST", "/api/sessions", {"Origin": own, **JSON}, b"{}")
    assert status == 201


@pytest.mark.parametrize("site", ["cross-site", "same-site", "CROSS-SITE"])
def test_a_cross_site_fetch_without_an_origin_is_refused(serve, site):
    assert raw(serve, "GET", "/api/approvals", {"Sec-Fetch-Site": site})[0] == 403


@pytest.mark.parametrize("content_type", [None, "text/plain", "text/plain;charset=UTF-8",
                                          "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                          "application/json; charset=latin-1", "application/jsonx", "text/json"])
@pytest.mark.parametrize("path", ["/api/sessions", "/v1/chat/completions", "/api/approvals/apr_x",
                                  "/api/sessions/s/steer"])
def test_a_body_that_is_not_declared_json_is_refused(serve, content_type, path):
    body = b'{"messages": [{"role": "user", "content": "hi"}], "approved": true, "text": "x"}'
    headers = {"Content-Type": content_type} if content_type else {}
    status, _, payload = raw(serve, "POST", path, headers, body)
    assert status == 415 and json.loads(payload)["error"]["code"] == "unsupported_media_type"
    assert sessions_on_disk(serve) == 0


def test_json_with_a_charset_parameter_is_accepted(serve):
    assert raw(serve, "POST", "/api/sessions", {"Content-Type": "application/json; charset=utf-8"}, b"{}")[0] == 201


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
def test_cors_preflight_is_refused_for_origins_not_configured(serve, origin):
    status, headers, _ = raw(serve, "OPTIONS", "/v1/chat/completions",
                             {"Origin": origin, "Access-Control-Request-Method": "POST",
                              "Access-Control-Request-Headers": "content-type"})
    assert status == 403 and "access-control-allow-origin" not in headers


def test_cors_is_answered_for_a_configured_origin(tmp_path: Path):
    harness = ServeHarness(tmp_path, ScriptedProvider(), allowed_origins=("http://localhost:5173",))
    try:
        status, headers, _ = raw(harness, "OPTIONS", "/api/sessions",
                                 {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "POST"})
        assert status == 204 and headers["access-control-allow-origin"] == "http://localhost:5173"
        status, headers, _ = raw(harness, "POST", "/api/sessions", {"Origin": "http://localhost:5173", **JSON}, b"{}")
        assert status == 201 and headers["access-control-allow-origin"] == "http://localhost:5173"
    finally:
        harness.stop()


def start_turn(serve: ServeHarness, out: dict[str, Any], client: str | None) -> threading.Thread:
    headers = {"X-Atomic-Client": client} if client else {}

    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S, headers=headers,
                                     json={"messages": [{"role": "user", "content": "run ls"}]})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def wait_pending(serve: ServeHarness) -> dict[str, Any]:
    with httpx.stream("GET", f"{serve.base_url}/api/events", headers={"X-Atomic-Operator": OPERATOR},
                      timeout=WAIT_S) as events:
        for line in events.iter_lines():
            if line.startswith("data: ") and '"approval_request"' in line:
                return json.loads(line.removeprefix("data: "))
    raise AssertionError("no approval_request")


@pytest.mark.parametrize("intruder", [{}, {"X-Atomic-Client": CLIENT_B}, {"X-Atomic-Operator": "wrong-token"}])
def test_another_client_can_neither_see_nor_answer_an_approval(serve, intruder):
    out: dict[str, Any] = {}
    thread = start_turn(serve, out, CLIENT_A)
    asked = wait_pending(serve)
    listed = httpx.get(f"{serve.base_url}/api/approvals", headers=intruder)
    assert listed.status_code in (200, 403) and (listed.status_code == 403 or listed.json()["data"] == [])
    answer = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"approved": True},
                        headers=intruder)
    assert answer.status_code == 403
    mine = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"approved": False},
                      headers={"X-Atomic-Client": CLIENT_A})
    assert mine.status_code == 200 and mine.json()["approved"] is False
    thread.join(WAIT_S)
    assert out["response"].status_code == 200


def test_an_anonymous_turns_approval_is_answered_only_from_the_operator_surface(serve):
    out: dict[str, Any] = {}
    thread = start_turn(serve, out, None)
    asked = wait_pending(serve)
    assert httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"approved": True},
                      headers={"X-Atomic-Client": CLIENT_A}).status_code == 403
    ok = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"decision": "deny"},
                    headers={"X-Atomic-Operator": OPERATOR})
    assert ok.status_code == 200
    thread.join(WAIT_S)


def test_the_event_stream_of_another_client_carries_nothing_of_the_turn(serve):
    seen: list[str] = []
    ready = threading.Event()

    def listen() -> None:
        with httpx.stream("GET", f"{serve.base_url}/api/events", headers={"X-Atomic-Client": CLIENT_B},
                          timeout=WAIT_S) as events:
            ready.set()
            try:
                for line in events.iter_lines():
                    if line.startswith("event: "):
                        seen.append(line.removeprefix("event: "))
            except httpx.RemoteProtocolError:
                return  # the server stopped

    listener = threading.Thread(target=listen)
    listener.start()
    ready.wait(WAIT_S)
    out: dict[str, Any] = {}
    thread = start_turn(serve, out, CLIENT_A)
    asked = wait_pending(serve)
    httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"decision": "deny"},
               headers={"X-Atomic-Client": CLIENT_A})
    thread.join(WAIT_S)
    serve.wait_turns()
    serve.stop()
    listener.join(WAIT_S)
    # not the approval, and since the session is CLIENT_A's, none of its turn events either
    assert not {"turn_started", "turn_finished", "approval_request", "approval_resolved"} & set(seen)


@pytest.mark.parametrize("client_id", ["short", "has space in it 0123456789", "x" * 200, "ünïcode-0123456789abc"])
def test_a_malformed_client_id_is_a_clear_400(serve, client_id):
    status, _, payload = raw(serve, "GET", "/api/approvals", {"X-Atomic-Client": client_id.encode().decode("latin-1")})
    assert status == 400 and json.loads(payload)["error"]["code"] == "invalid_client_id"


@pytest.mark.parametrize("where", ["/", "/etc", "..", "{home}", "{outside}", "{link_to_root}"])
def test_a_client_cannot_choose_a_working_dir_outside_the_operators_roots(serve, tmp_path, where):
    (tmp_path / "link_to_root").symlink_to("/")
    outside = tmp_path.parent
    value = where.format(home=str(Path.home()), outside=str(outside), link_to_root=str(tmp_path / "link_to_root"))
    response = httpx.post(f"{serve.base_url}/api/sessions", json={"workingDir": value})
    assert response.status_code in (400, 403)
    assert sessions_on_disk(serve) == 0


def test_a_working_dir_inside_the_served_directory_is_accepted(serve, tmp_path):
    (tmp_path / "project").mkdir()
    response = httpx.post(f"{serve.base_url}/api/sessions", json={"workingDir": str(tmp_path / "project")})
    assert response.status_code == 201 and response.json()["workingDir"] == str((tmp_path / "project").resolve())


@pytest.mark.parametrize("body", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
                                  b'{"messages": ' + b"[" * 70 + b"]" * 70 + b"}", b'{"n": ' + b"9" * 5000 + b"}",
                                  b'{"x": "\xff\xfe"}', b"[1, 2]", b'"just a string"', b"{\"a\": NaN"])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/api/sessions", "/api/approvals/apr_x"])
def test_deep_huge_or_broken_json_is_a_400_envelope_never_a_500(serve, body, path):
    status, headers, payload = raw(serve, "POST", path, JSON, body)
    assert status == 400 and headers["content-type"].startswith("application/json")
    error = json.loads(payload)["error"]
    assert error["code"] in ("invalid_json", "invalid_value") and error["type"] == "invalid_request_error"


def test_the_openai_client_still_works_against_the_guarded_server(serve):
    api = openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="unused", max_retries=0, timeout=WAIT_S,
                        default_headers={"X-Atomic-Client": CLIENT_A})
    models = api.models.list()
    assert [m.id for m in models.data] == ["atomic-agent"]


def test_the_openai_client_turn_approval_is_answered_by_its_own_client_id(serve):
    api = openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="unused", max_retries=0, timeout=WAIT_S,
                        default_headers={"X-Atomic-Client": CLIENT_A})
    out: dict[str, Any] = {}

    def run() -> None:
        out["reply"] = api.chat.completions.create(model="atomic-agent",
                                                   messages=[{"role": "user", "content": "run ls"}])

    thread = threading.Thread(target=run)
    thread.start()
    asked = wait_pending(serve)
    assert httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"approved": True},
                      headers={"X-Atomic-Client": CLIENT_B}).status_code == 403
    assert httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}", json={"approved": True},
                      headers={"X-Atomic-Client": CLIENT_A}).status_code == 200
    thread.join(WAIT_S)
    assert out["reply"].choices[0].message.content == "listed"
