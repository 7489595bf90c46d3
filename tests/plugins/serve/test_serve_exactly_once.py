"""over HTTP a handed-back steer was answered twice (the client re-sent
its text as a new message, and after a restart recovery re-queued the stored copy too),
and a retry after "server disconnected" duplicated the message. A real `serve` process:
the steer is re-sent by its id (`X-Atomic-Resend-Steer`), which consumes the stored copy,
so after a SIGTERM and a restart it is in the conversation once; an `Idempotency-Key`
retry returns the original turn instead of a second one."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer
from tests.plugins.serve.test_serve_sigterm_restart import AUTH, post, quiet_state, start_serve, stop
from tests.plugins.serve.test_serve_subprocess import WAIT_S, free_port
from tests.turns.answered_once import read_conversation, unanswered_or_doubled

FIRST = json.dumps([{"tool": "reply", "args": {"text": "first answer"}}])


def test_a_handed_back_steer_resent_by_id_is_answered_once_across_a_restart(tmp_path: Path) -> None:
    state = quiet_state(tmp_path, 30)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeLlamaServer(script=[Delay(1.5, FIRST)]) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve1.stderr")
        try:
            session = httpx.post(f"{base}/api/sessions", json={}, headers=AUTH).json()["id"]
            answer: dict[str, Any] = {}
            thread = threading.Thread(target=lambda: answer.update(r=post(base, "the question", "q-1", session)))
            thread.start()
            deadline = time.monotonic() + WAIT_S
            while not fake.completion_bodies and time.monotonic() < deadline:
                time.sleep(0.02)
            steered = httpx.post(f"{base}/api/sessions/{session}/steer", json={"text": "and also this"}, headers=AUTH)
            assert steered.status_code == 200, steered.text  # accepted during the last inference
            thread.join(WAIT_S)
            body = answer["r"].json()
            assert body["choices"][0]["message"]["content"] == "first answer"
            [handed] = body["undelivered_steers"]
            assert handed["text"] == "and also this" and handed["steerId"]
            resend = {"model": "atomic-agent", "messages": [{"role": "user", "content": "and also this"}]}
            headers = {"X-Atomic-Session": session, "X-Atomic-Resend-Steer": handed["steerId"], **AUTH}
            resent = httpx.post(f"{base}/v1/chat/completions", json=resend, headers=headers, timeout=WAIT_S)
            assert resent.status_code == 200, resent.text
            again = httpx.post(f"{base}/v1/chat/completions", json=resend, headers=headers, timeout=WAIT_S)
            assert again.status_code == 409 and again.json()["error"]["code"] == "steer_not_queued"
            assert "do not send it again" in again.json()["error"]["message"]
            assert httpx.get(f"{base}/api/sessions/{session}/steer", headers=AUTH).json()["steers"] == []
            assert stop(proc) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        restarted = start_serve(tmp_path, state, port, fake.base_url, "serve2.stderr")
        try:
            time.sleep(0.5)  # recovery ran before the server listened; give a resumed turn a moment
            assert stop(restarted) == 0
        finally:
            if restarted.poll() is None:
                restarted.kill()
    assert unanswered_or_doubled(state, ["the question", "and also this"]) == []


def test_a_retry_with_the_same_idempotency_key_returns_the_original_turn(tmp_path: Path) -> None:
    state = quiet_state(tmp_path, 5)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeLlamaServer(script=[FIRST]) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve.stderr")
        try:
            session = httpx.post(f"{base}/api/sessions", json={}, headers=AUTH).json()["id"]
            first = post(base, "only once please", "key-a", session)
            retry = post(base, "only once please", "key-a", session)
            streamed = post(base, "only once please", "key-a", session, stream=True)
            other = post(base, "a different message", "key-a", session)
            assert stop(proc) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert first.status_code == retry.status_code == 200
    assert retry.json()["id"] == first.json()["id"]
    assert retry.json()["choices"][0]["message"]["content"] == "first answer"
    assert retry.headers["idempotent-replayed"] == "true"
    assert '"content":"first answer"' in streamed.text and streamed.text.endswith("data: [DONE]\n\n")
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
    assert len(fake.completion_bodies) == 1  # one turn, one inference
    assert read_conversation(state).users["only once please"] == 1


def test_the_409_for_a_refused_steer_says_how_to_resend_a_handed_back_one(tmp_path: Path) -> None:
    state = quiet_state(tmp_path, 5)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeLlamaServer() as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve.stderr")
        try:
            session = httpx.post(f"{base}/api/sessions", json={}, headers=AUTH).json()["id"]
            refused = httpx.post(f"{base}/api/sessions/{session}/steer", json={"text": "hello?"}, headers=AUTH)
            assert stop(proc) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert refused.status_code == 409
    assert "X-Atomic-Resend-Steer" in refused.json()["error"]["message"]
