"""A stopping `serve` (in process): a request that arrives once the stop began is refused with
503 `server_stopping` and nothing is written; an open GET /api/events stream ends with an
`error` event of code `server_stopping` instead of holding the shutdown up; a turn waiting
behind a running one is parked (503 `turn_parked`) and stays queued."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from atomic_agent.testing.scripted_provider import calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness, ThreadGatedProvider
from tests.turns.ingress_texts import admitted_texts

BODY = {"messages": [{"role": "user", "content": "hello"}]}


def test_a_request_during_the_stop_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    harness = ServeHarness(tmp_path, ThreadGatedProvider([], gate_at=99))
    try:
        harness.call(harness.ctx.begin_stop)
        refused = httpx.post(f"{harness.base_url}/v1/chat/completions", json=BODY, timeout=WAIT_S)
    finally:
        harness.stop()
    assert refused.status_code == 503 and refused.json()["error"]["code"] == "server_stopping"
    assert refused.headers["x-should-retry"] == "true" and refused.headers["retry-after"]
    assert admitted_texts(tmp_path / "state") == []


def test_the_events_stream_ends_when_the_server_stops(tmp_path: Path) -> None:
    harness = ServeHarness(tmp_path, ThreadGatedProvider([], gate_at=99))
    lines: list[str] = []
    try:
        with httpx.stream("GET", f"{harness.base_url}/api/events", timeout=WAIT_S) as stream:
            for line in stream.iter_lines():
                lines.append(line)
                if line.startswith(": connected"):
                    harness.call(harness.ctx.begin_stop)
    finally:
        harness.stop()
    assert "event: error" in lines and any('"code":"server_stopping"' in line for line in lines)


def test_a_queued_turn_is_parked_and_stays_queued(tmp_path: Path) -> None:
    provider = ThreadGatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "x"}))], gate_at=0)
    harness = ServeHarness(tmp_path, provider)
    answers: dict[str, httpx.Response] = {}
    try:
        session = httpx.post(f"{harness.base_url}/api/sessions", json={}).json()["id"]
        headers = {"X-Atomic-Session": session}

        def send(text: str) -> None:
            body = {"messages": [{"role": "user", "content": text}]}
            answers[text] = httpx.post(f"{harness.base_url}/v1/chat/completions", json=body, headers=headers,
                                       timeout=WAIT_S)

        first = threading.Thread(target=send, args=("first",))
        first.start()
        assert provider.entered.wait(WAIT_S)  # the first turn is mid-inference
        second = threading.Thread(target=send, args=("second",))
        second.start()
        while len(admitted_texts(tmp_path / "state")) < 2:
            time.sleep(0.01)  # the second is admitted and waits behind the first
        harness.call(harness.ctx.begin_stop)
        provider.release.set()  # the running step finishes; the turn parks at the boundary
        first.join(WAIT_S)
        second.join(WAIT_S)
    finally:
        harness.stop()
    for text in ("first", "second"):
        body = answers[text].json()
        assert answers[text].status_code == 503 and body["error"]["code"] == "turn_parked", body
        assert answers[text].headers["x-should-retry"] == "false"  # no Idempotency-Key: a retry would duplicate
    assert "is still queued" in answers["second"].json()["error"]["message"]
    assert "interrupted at a step boundary" in answers["first"].json()["error"]["message"]
