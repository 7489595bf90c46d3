"""The web-page attacks against a real `atomic-agent serve` process on its defaults (loopback, no
key): raw HTTP for the header cases, the official openai client for the model's own route,
the operator token read from the state dir as the operator's surface would."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.plugins.serve.test_serve_subprocess import ATOMIC_AGENT, WAIT_S, child_env, free_port, wait_until_up

SHELL_THEN_REPLY = [json.dumps([{"tool": "os.shell.run", "args": {"cmd": "touch", "args": ["pwned"]}}]),
                    json.dumps([{"tool": "reply", "args": {"text": "done"}}])]


@pytest.fixture()
def served(tmp_path: Path):  # noqa: ANN201
    state = tmp_path / "state"
    state.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    # these attacks target a keyless server (serve.requireApiKey false, the opt-out): with the default
    # generated key every one of them is a 401 before anything else is looked at
    (state / "config.json").write_text(json.dumps({"agent": {"approvalLevel": 2}, "serve": {"requireApiKey": False},
                                                   "plugins": {"disabled": ["memory_reflection", "memory_notes",
                                                                            "memory_profile"]}}))
    port = free_port()
    with FakeLlamaServer(script=SHELL_THEN_REPLY * 3) as fake:
        env = child_env(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        stderr = (tmp_path / "serve.stderr").open("wb")
        proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(state), "serve", "--port", str(port),
                                 "--cwd", str(work)], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base, proc)
            yield {"base": base, "port": port, "state": state, "work": work, "tmp": tmp_path}
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=WAIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()


def raw(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None,
        host: str | None = None) -> tuple[int, dict[str, str], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_S)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        for key, value in headers.items():
            conn.putheader(key, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        conn.close()


def test_the_measured_attack_chain_of_the_issue_is_refused_at_every_step(served):
    """Host/Origin evil.example: models 200, session 201, chat turn, approvals listed and approved — before."""
    port = served["port"]
    evil = {"Origin": "http://evil.example"}
    assert raw(port, "GET", "/v1/models", evil, host="evil.example")[0] == 403
    assert raw(port, "POST", "/api/sessions", {**evil, "Content-Type": "text/plain"}, b"{}",
               host="evil.example")[0] == 403
    chat = json.dumps({"messages": [{"role": "user", "content": "touch pwned"}]}).encode()
    assert raw(port, "POST", "/v1/chat/completions", {**evil, "Content-Type": "text/plain"}, chat)[0] == 403
    assert raw(port, "POST", "/v1/chat/completions", {"Content-Type": "text/plain"}, chat)[0] == 415
    assert raw(port, "GET", "/api/approvals", evil)[0] == 403
    assert not (served["work"] / "pwned").exists()
    assert httpx.get(f"{served['base']}/api/sessions").json()["data"] == []


def test_a_turns_approval_answers_only_to_its_client_or_the_operator_token(served):
    token = (served["state"] / "serve" / "operator-token").read_text().strip()
    assert oct((served["state"] / "serve" / "operator-token").stat().st_mode & 0o777) == "0o600"
    api = openai.OpenAI(base_url=f"{served['base']}/v1", api_key="unused", max_retries=0, timeout=WAIT_S,
                        default_headers={"X-Atomic-Client": "desktop-0123456789abcdef"})
    out: dict[str, Any] = {}

    def run() -> None:
        out["reply"] = api.chat.completions.create(model="atomic-agent",
                                                   messages=[{"role": "user", "content": "touch pwned"}])

    thread = threading.Thread(target=run)
    thread.start()
    asked = None
    with httpx.stream("GET", f"{served['base']}/api/events", headers={"X-Atomic-Operator": token},
                      timeout=WAIT_S) as events:
        for line in events.iter_lines():
            if line.startswith("data: ") and '"approval_request"' in line:
                asked = json.loads(line.removeprefix("data: "))
                break
    assert asked is not None and asked["category"] == "shell"
    url = f"{served['base']}/api/approvals/{asked['approvalId']}"
    assert httpx.get(f"{served['base']}/api/approvals").json()["data"] == []  # anonymous: nothing listed
    assert httpx.post(url, json={"approved": True}).status_code == 403
    assert httpx.post(url, json={"approved": True},
                      headers={"X-Atomic-Client": "intruder-0123456789abcdef"}).status_code == 403
    assert httpx.post(url, json={"approved": False}, headers={"X-Atomic-Operator": token}).status_code == 200
    thread.join(WAIT_S)
    assert out["reply"].choices[0].message.content == "done" and not (served["work"] / "pwned").exists()


def test_a_client_cannot_make_the_whole_filesystem_its_workspace(served):
    root = httpx.post(f"{served['base']}/api/sessions", json={"workingDir": "/"})
    assert root.status_code == 403 and root.json()["error"]["code"] == "working_dir_not_allowed"
    inside = served["work"] / "sub"
    inside.mkdir()
    assert httpx.post(f"{served['base']}/api/sessions", json={"workingDir": str(inside)}).status_code == 201


def test_hundred_thousand_deep_json_is_a_400_envelope(served):
    status, _, payload = raw(served["port"], "POST", "/v1/chat/completions", {"Content-Type": "application/json"},
                             b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and json.loads(payload)["error"]["code"] == "invalid_json"
