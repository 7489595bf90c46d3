"""`atomic-agent serve` as a real process: boots from the CLI, answers the openai client over
the llama-server API (the scripted fake), and stops cleanly on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import openai

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer

ATOMIC_AGENT = Path(sys.executable).parent / "atomic-agent"
WAIT_S = 60.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def child_env(tmp_path: Path, extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env.update(extra)
    return env


def wait_until_up(base: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        assert proc.poll() is None, "serve exited during start-up"
        try:
            httpx.get(f"{base}/v1/models", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("serve did not come up")


def test_serve_process_answers_the_openai_client_and_stops_on_sigterm(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"plugins": {"disabled": ["memory_reflection", "memory_notes",
                                                                            "memory_profile"]}}))
    port = free_port()
    reply = json.dumps([{"tool": "reply", "args": {"text": "served"}}])
    with FakeLlamaServer(script=[reply]) as fake:
        env = child_env(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        stderr = (tmp_path / "serve.stderr").open("wb")
        proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(state), "serve", "--port", str(port),
                                 "--cwd", str(tmp_path)], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, proc)
            # no key configured: serve generated one, readable by this user only, and every route needs it
            key_file = state / "serve" / "api-key"
            key = key_file.read_text().strip()
            assert len(key) >= 32 and oct(key_file.stat().st_mode & 0o777) == "0o600"
            assert httpx.get(f"{base}/v1/models").status_code == 401
            assert httpx.get(f"{base}/v1/models", headers={"Authorization": "Bearer x"}).status_code == 401
            api = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=WAIT_S)
            raw = api.chat.completions.with_raw_response.create(model="atomic-agent",
                                                               messages=[{"role": "user", "content": "hi"}])
            assert raw.parse().choices[0].message.content == "served"
            session_id = raw.headers["x-atomic-session"]
            caps = httpx.get(f"{base}/api/capabilities", headers={"Authorization": f"Bearer {key}"}).json()
            assert caps["agent"]["approvalLevel"] == 1 and caps["auth"] is True
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=WAIT_S) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=WAIT_S)
            stderr.close()
    log = (tmp_path / "serve.stderr").read_text()
    assert f"http://127.0.0.1:{port}" in log
    assert log.count(key) == 1  # shown once, when it was generated
    assert list((state / "traces").glob(f"{session_id}.ndjson"))  # serve traces by default (the sidecar does not)
