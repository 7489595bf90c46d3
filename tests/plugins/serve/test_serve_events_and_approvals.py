"""GET /api/events streams runtime events including approval requests (category, label);
POST /api/approvals/{id} answers one; late and unknown answers are clear errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

HI = [{"role": "user", "content": "run ls"}]
CLIENT = {"X-Atomic-Client": "test-client-0123456789abcdef"}  # the client that starts the turns and answers them
GATED = [calls(("t.gated", {"path": "ls"})), calls(("reply", {"text": "listed"}))]


def post_chat(serve: ServeHarness, out: dict, **headers: str) -> threading.Thread:
    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", json={"model": "m", "messages": HI},
                                     timeout=WAIT_S, headers={**CLIENT, **headers})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def read_events_until(lines: Iterator[str], kind: str) -> tuple[dict, list[str]]:
    seen: list[str] = []
    name = None
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
            seen.append(name)
        elif line.startswith("data: ") and name == kind:
            return json.loads(line.removeprefix("data: ")), seen
    raise AssertionError(f"the stream ended before a {kind} event; saw {seen}")


def test_approval_request_on_the_event_stream_is_answered_over_http(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(GATED))
    try:
        with httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S, headers=CLIENT) as events_response:
            events = events_response.iter_lines()
            out: dict = {}
            thread = post_chat(serve, out)
            asked, seen = read_events_until(events, "approval_request")
            assert "turn_started" in seen
            assert (asked["category"], asked["label"], asked["tool"]) == ("shell", "shell command", "t.gated")
            pending = httpx.get(f"{serve.base_url}/api/approvals", headers=CLIENT).json()["data"]
            assert [p["approvalId"] for p in pending] == [asked["approvalId"]]
            answer = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                            json={"approved": True}, headers=CLIENT)
            assert answer.json() == {"approvalId": asked["approvalId"], "approved": True, "decision": "once"}
            resolved, _ = read_events_until(events, "approval_resolved")
            assert resolved["outcome"] == "answered" and resolved["approved"] is True
            thread.join(WAIT_S)
        assert out["response"].json()["choices"][0]["message"]["content"] == "listed"
        again = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                           json={"approved": False}, headers=CLIENT)
        assert again.status_code == 410 and again.json()["error"]["code"] == "approval_already_answered"
        unknown = httpx.post(f"{serve.base_url}/api/approvals/apr_0000",
                            json={"approved": True}, headers=CLIENT)
        assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "approval_not_found"
    finally:
        serve.stop()


def test_a_client_connecting_late_still_sees_the_pending_approval(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(GATED))
    try:
        out: dict = {}
        with httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S, headers=CLIENT) as first_response:
            first = first_response.iter_lines()
            thread = post_chat(serve, out)
            asked, _ = read_events_until(first, "approval_request")
        with httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S, headers=CLIENT) as late_response:
            late = late_response.iter_lines()
            replayed, _ = read_events_until(late, "approval_request")
        assert replayed["approvalId"] == asked["approvalId"]
        httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                   json={"decision": "deny"}, headers=CLIENT)
        thread.join(WAIT_S)
        assert out["response"].status_code == 200
    finally:
        serve.stop()


def test_an_unanswered_approval_times_out_and_a_late_answer_gets_410(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(GATED), approval_timeout_s=0.05)
    try:
        with httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S, headers=CLIENT) as events_response:
            events = events_response.iter_lines()
            out: dict = {}
            thread = post_chat(serve, out)
            asked, _ = read_events_until(events, "approval_request")
            resolved, _ = read_events_until(events, "approval_resolved")
            assert resolved["outcome"] == "timed_out"
            thread.join(WAIT_S)
        late = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                            json={"approved": True}, headers=CLIENT)
        assert late.status_code == 410 and late.json()["error"]["code"] == "approval_timed_out"
    finally:
        serve.stop()


def test_grants_are_refused_on_a_server_not_bound_to_loopback(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(GATED), grants_allowed=False)
    try:
        with httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S, headers=CLIENT) as events_response:
            events = events_response.iter_lines()
            out: dict = {}
            thread = post_chat(serve, out)
            asked, _ = read_events_until(events, "approval_request")
            assert asked["canGrantCategory"] is False
            refused = httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                                 json={"decision": "session"}, headers=CLIENT)
            assert refused.status_code == 400 and "loopback" in refused.json()["error"]["message"]
            httpx.post(f"{serve.base_url}/api/approvals/{asked['approvalId']}",
                       json={"decision": "once"}, headers=CLIENT)
            thread.join(WAIT_S)
        assert out["response"].status_code == 200
    finally:
        serve.stop()


def test_capabilities_report_the_live_gate_level(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider())
    try:
        caps = httpx.get(f"{serve.base_url}/api/capabilities").json()
        assert caps["agent"] == {"approvalLevel": 1, "approvalLevelName": "paranoid", "approvalRequired": True}
        serve.call(lambda: serve.runtime.gate.set_level(4))
        caps = httpx.get(f"{serve.base_url}/api/capabilities").json()
        assert caps["agent"]["approvalLevel"] == 4 and caps["agent"]["approvalRequired"] is True
        assert caps["headers"] == {"session": "x-atomic-session", "extensions": "x-atomic-extensions",
                                   "client": "x-atomic-client", "operator": "x-atomic-operator"}
        assert {c["name"]: c["label"] for c in caps["approvalCategories"]}["shell"] == "shell command"
    finally:
        serve.stop()
