"""Invariant: another local user or client cannot drive or watch what a client started.

`serve` needs a key by default (generated on first start, 0600, shown once; opting out
warns). On a server without one, a turn started with an `X-Atomic-Client` id is steered
only by that client or the operator token, and its session's events reach only them."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from atomic_agent.plugins.serve.serve_command import local_api_key
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness, ThreadGatedProvider

CLIENT_A = "client-a-0123456789abcdef"
CLIENT_B = "client-b-0123456789abcdef"
OPERATOR = "operator-token-" + "e" * 48
READ_THEN_REPLY = [calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))]


def test_a_key_is_generated_once_kept_private_and_never_shown_again(tmp_path: Path, capsys):
    key = local_api_key(tmp_path, True, "ATOMIC_AGENT_API_KEY")
    path = tmp_path / "serve" / "api-key"
    assert key and len(key) >= 32 and path.read_text().strip() == key
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    assert key in capsys.readouterr().err
    assert local_api_key(tmp_path, True, "ATOMIC_AGENT_API_KEY") == key  # the next start reuses it
    assert key not in capsys.readouterr().err
    path.write_text("short\n")  # a file too short to be a key is replaced, not trusted
    assert local_api_key(tmp_path, True, "ATOMIC_AGENT_API_KEY") not in (None, "short", key)


def test_opting_out_serves_without_a_key_and_warns(tmp_path: Path, capsys):
    assert local_api_key(tmp_path, False, "ATOMIC_AGENT_API_KEY") is None
    assert "every user of this machine" in capsys.readouterr().err
    assert not (tmp_path / "serve" / "api-key").exists()


def test_a_keyed_server_answers_no_request_without_the_key(tmp_path: Path):
    serve = ServeHarness(tmp_path, None, api_key="k" * 40)
    try:
        for headers in ({}, {"Authorization": "Bearer " + "k" * 39}, {"Authorization": "bearer " + "k" * 40},
                        {"Authorization": "Basic " + "k" * 40}, {"X-Atomic-Operator": "k" * 40}):
            for method, path in (("GET", "/v1/models"), ("GET", "/api/events"), ("GET", "/api/sessions")):
                assert httpx.request(method, f"{serve.base_url}{path}", headers=headers).status_code == 401
        assert httpx.get(f"{serve.base_url}/v1/models",
                         headers={"Authorization": "Bearer " + "k" * 40}).status_code == 200
    finally:
        serve.stop()


@pytest.fixture()
def held(tmp_path: Path):
    """A keyless server with a turn of CLIENT_A held inside its first inference."""
    provider = ThreadGatedProvider(READ_THEN_REPLY, gate_at=0)
    serve = ServeHarness(tmp_path, provider, operator_token=OPERATOR)
    out: dict[str, Any] = {}
    sid = httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]

    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                                     json={"messages": [{"role": "user", "content": "start"}]},
                                     headers={"X-Atomic-Session": sid, "X-Atomic-Client": CLIENT_A})

    thread = threading.Thread(target=run)
    thread.start()
    assert provider.entered.wait(WAIT_S)

    def finish() -> None:
        provider.release.set()
        thread.join(WAIT_S)

    try:
        yield serve, sid, finish
    finally:
        provider.release.set()
        thread.join(WAIT_S)
        serve.stop()


@pytest.mark.parametrize("intruder", [{}, {"X-Atomic-Client": CLIENT_B}, {"X-Atomic-Client": CLIENT_A.upper()},
                                      {"X-Atomic-Client": CLIENT_A + "x"}, {"X-Atomic-Operator": "wrong-token"}])
def test_only_the_starting_client_or_the_operator_steers_a_turn(held, intruder):
    serve, sid, finish = held
    url = f"{serve.base_url}/api/sessions/{sid}/steer"
    refused = httpx.post(url, json={"text": "exfiltrate"}, headers=intruder)
    assert refused.status_code in (403,), refused.text
    assert refused.json()["error"]["code"] in ("not_your_turn", "invalid_operator_token")
    assert httpx.post(url, json={"text": "from a"}, headers={"X-Atomic-Client": CLIENT_A}).status_code == 200
    assert httpx.post(url, json={"text": "from op"}, headers={"X-Atomic-Operator": OPERATOR}).status_code == 200
    finish()
    users = [e.text for e in serve.runtime.sessions.load(sid).entries if e.kind == "user"]
    assert "exfiltrate" not in users and {"from a", "from op"} <= set(users)


def _listen(serve: ServeHarness, headers: dict[str, str], seen: list[dict[str, Any]], ready: threading.Event
            ) -> threading.Thread:
    def listen() -> None:
        with httpx.stream("GET", f"{serve.base_url}/api/events", headers=headers, timeout=WAIT_S) as events:
            ready.set()
            try:
                for line in events.iter_lines():
                    if line.startswith("data: "):
                        seen.append(json.loads(line.removeprefix("data: ")))
            except httpx.RemoteProtocolError:
                return  # the server stopped: the stream is over

    thread = threading.Thread(target=listen)
    thread.start()
    assert ready.wait(WAIT_S)
    return thread


def test_a_sessions_events_reach_only_its_client_and_the_operator(tmp_path: Path):
    provider = ThreadGatedProvider(READ_THEN_REPLY, gate_at=0)
    serve = ServeHarness(tmp_path, provider, operator_token=OPERATOR)
    streams = {"a": {"X-Atomic-Client": CLIENT_A}, "b": {"X-Atomic-Client": CLIENT_B}, "anonymous": {},
               "operator": {"X-Atomic-Operator": OPERATOR}}
    seen: dict[str, list[dict[str, Any]]] = {name: [] for name in streams}
    listeners = [_listen(serve, headers, seen[name], threading.Event()) for name, headers in streams.items()]
    try:
        sid = httpx.post(f"{serve.base_url}/api/sessions", json={}).json()["id"]
        provider.release.set()
        answer = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S,
                            json={"messages": [{"role": "user", "content": "start"}]},
                            headers={"X-Atomic-Session": sid, "X-Atomic-Client": CLIENT_A})
        assert answer.status_code == 200
        serve.wait_turns()
    finally:
        serve.stop()
        for listener in listeners:
            listener.join(WAIT_S)

    def of_session(name: str) -> list[str]:
        return [e["type"] for e in seen[name] if e.get("sessionId") == sid]

    assert "turn_finished" in of_session("a") and "turn_finished" in of_session("operator")
    assert of_session("b") == [] and of_session("anonymous") == []
