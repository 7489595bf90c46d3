"""Serve: SIGTERM with requests in flight cancelled every turn, queued
ones included, clients got a plain-text 500 or a stream with no end, and a restart
answered none of them. Now a real `serve` process is stopped with a real SIGTERM under
load: every client gets a JSON envelope (or an error chunk and `[DONE]`), the process
exits 0 without a traceback, and a restart answers every accepted message exactly once —
a retry with the same Idempotency-Key receives that answer."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer
from tests.plugins.serve.test_serve_subprocess import ATOMIC_AGENT, WAIT_S, child_env, free_port, wait_until_up
from tests.turns.answered_once import unanswered_or_doubled
from tests.turns.ingress_texts import admitted_texts

INFERENCE_S = 1.5  # each scripted completion takes this long: turns are mid-inference at the signal


API_KEY = "sigterm-test-key-" + "0" * 24
AUTH = {"Authorization": f"Bearer {API_KEY}"}


def start_serve(tmp_path: Path, state: Path, port: int, fake_url: str, log: str) -> subprocess.Popen[bytes]:
    env = child_env(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake_url, "ATOMIC_AGENT_API_KEY": API_KEY})
    stderr = (tmp_path / log).open("wb")
    proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(state), "serve", "--port", str(port),
                             "--cwd", str(tmp_path)], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    stderr.close()
    wait_until_up(f"http://127.0.0.1:{port}", proc)
    return proc


def quiet_state(tmp_path: Path, grace_s: int) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
        "serve": {"shutdownGraceS": grace_s}}))
    return state


def post(base: str, text: str, key: str, session: str, stream: bool = False) -> httpx.Response:
    body = {"model": "atomic-agent", "messages": [{"role": "user", "content": text}], "stream": stream}
    return httpx.post(f"{base}/v1/chat/completions", json=body, timeout=WAIT_S,
                      headers={"Idempotency-Key": key, "X-Atomic-Session": session, **AUTH})


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT_S)


@pytest.mark.parametrize("grace_s", [0, 30], ids=["grace0-park-mid-inference", "grace30-finish-the-step"])
def test_sigterm_under_load_then_restart_answers_every_accepted_message_once(tmp_path: Path, grace_s: int) -> None:
    state = quiet_state(tmp_path, grace_s)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    texts = [f"message {i}" for i in range(5)]
    with FakeLlamaServer(script=[Delay(INFERENCE_S)] * 10) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve1.stderr")
        try:
            sessions = [httpx.post(f"{base}/api/sessions", json={}, headers=AUTH).json()["id"] for _ in range(2)]
            plan = [(text, f"key-{i}", sessions[0] if i < 3 else sessions[1], i == 1) for i, text in enumerate(texts)]
            answers: dict[str, Any] = {}

            def client(text: str, key: str, session: str, stream: bool) -> None:
                try:
                    answers[text] = post(base, text, key, session, stream)
                except httpx.HTTPError as exc:  # a dropped connection is exactly what must not happen
                    answers[text] = exc

            threads = [threading.Thread(target=client, args=item) for item in plan]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + WAIT_S
            while len(fake.completion_bodies) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)  # both sessions' first turns are mid-inference
            # the other three wait behind: admitted, so the stop parks them (a request that came
            # after the stop began would be refused with server_stopping instead)
            while sorted(admitted_texts(state)) != texts and time.monotonic() < deadline:
                time.sleep(0.02)
            assert stop(proc) == 0
            for thread in threads:
                thread.join(WAIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
        log = (tmp_path / "serve1.stderr").read_text()
        assert "Traceback" not in log, log
        for text, response in answers.items():
            assert isinstance(response, httpx.Response), f"{text}: {response!r}"
            if response.headers["content-type"].startswith("text/event-stream"):
                frames = [f for f in response.text.split("\n\n") if f.startswith("data: ")]
                assert frames[-1] == "data: [DONE]", response.text
                last = json.loads(frames[-2][len("data: "):])
                assert "error" in last or last["choices"][0]["finish_reason"] == "stop", response.text
                continue
            body = response.json()  # never a plain-text 500
            assert response.status_code in (200, 503), (text, response.status_code, body)
            if response.status_code == 503:
                assert body["error"]["code"] == "turn_parked" and body["turnId"], body
                assert response.headers["x-should-retry"] == "true"  # the request carried a key
        parked = [t for t, r in answers.items() if isinstance(r, httpx.Response) and r.status_code == 503]
        assert parked, "the signal came while turns were in flight: some must have been parked"

        restarted = start_serve(tmp_path, state, port, fake.base_url, "serve2.stderr")
        try:
            for text, key, session, _ in plan:  # the same request, the same key: the original turn's answer
                retry = post(base, text, key, session)
                assert retry.status_code == 200, retry.text
                assert retry.json()["choices"][0]["message"]["content"] == "done"
            assert stop(restarted) == 0
        finally:
            if restarted.poll() is None:
                restarted.kill()
    assert unanswered_or_doubled(state, texts) == []
    assert "Traceback" not in (tmp_path / "serve2.stderr").read_text()
