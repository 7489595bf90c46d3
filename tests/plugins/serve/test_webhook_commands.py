"""`atomic-agent webhook list|add|remove|test` through the real console script, against a real
`serve` process on loopback (the model: the fake llama-server), and the warnings `config set`
and `doctor` give for an endpoint that can accept no call."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import httpx

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import CLI, run_cli

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
         "tasks": {"schedulerTickMs": 3_600_000}}
SECRET = "a-long-shared-secret-for-tests-0123456789"


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env.update(extra or {})
    return env


def _state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps(QUIET))
    return state


def _cli(state: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    return run_cli(["--state-dir", str(state), *args], env=env or _env(), timeout=60, input_text=stdin)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_add_stores_the_secret_in_dotenv_and_list_and_remove_follow(tmp_path: Path):
    state = _state(tmp_path)
    added = _cli(state, "webhook", "add", "ci", "--template", "Build {{body.build.id}} failed: {{body.log}}",
                 "--stdin", stdin=SECRET + "\n")
    assert added.returncode == 0, added.stderr
    assert "secret stored as ATOMIC_AGENT_WEBHOOK_CI_SECRET" in added.stdout and SECRET not in added.stdout
    dotenv = state / ".env"
    assert f"ATOMIC_AGENT_WEBHOOK_CI_SECRET={SECRET}" in dotenv.read_text()
    assert stat.S_IMODE(dotenv.stat().st_mode) == 0o600
    config = json.loads((state / "config.json").read_text())
    assert config["webhooks"]["endpoints"]["ci"] == {"messageTemplate": "Build {{body.build.id}} failed: {{body.log}}",
                                                     "sessionMode": "new",
                                                     "hmacSecretEnv": "ATOMIC_AGENT_WEBHOOK_CI_SECRET"}
    assert SECRET not in (state / "config.json").read_text()
    listed = json.loads(_cli(state, "webhook", "list", "--json").stdout)
    assert [(w["name"], w["auth"], w["secretSet"], w["path"]) for w in listed] == [
        ("ci", "signature", True, "/api/webhooks/ci")]
    again = _cli(state, "webhook", "add", "ci", "--template", "x", "--stdin", stdin=SECRET + "\n")
    assert again.returncode != 0 and "pass --replace" in again.stderr
    removed = _cli(state, "webhook", "remove", "ci")
    assert removed.returncode == 0 and "removed ATOMIC_AGENT_WEBHOOK_CI_SECRET" in removed.stdout
    assert "WEBHOOK_CI" not in dotenv.read_text()
    assert json.loads(_cli(state, "webhook", "list", "--json").stdout) == []


def test_generate_prints_the_secret_once_and_bad_input_writes_nothing(tmp_path: Path):
    state = _state(tmp_path)
    made = _cli(state, "webhook", "add", "gh", "--template", "{{body.action}}", "--generate")
    assert made.returncode == 0, made.stderr
    shown = made.stdout.split("secret (shown this once): ")[1].split()[0]
    assert len(shown) == 64 and f"ATOMIC_AGENT_WEBHOOK_GH_SECRET={shown}" in (state / ".env").read_text()
    for args, stdin, said in [
        (["add", "x", "--template", "t", "--stdin"], "short\n", "at least 16 characters"),
        (["add", "x", "--template", "t"], "", "no terminal to ask for the secret"),
        (["add", "bad/name", "--template", "t", "--generate"], None, "must be 1-64 letters"),
        (["add", "x", "--template", " ", "--generate"], None, "--template must not be empty"),
        (["add", "x", "--template", "t", "--session-mode", "sometimes", "--generate"], None, "new or persistent"),
        (["remove", "nope"], None, "no webhook named 'nope'"),
        (["test", "nope"], None, "no webhook named 'nope'"),
    ]:
        result = _cli(state, "webhook", *args, stdin=stdin)
        assert result.returncode != 0 and said in result.stderr, (args, result.stderr)
    assert [w["name"] for w in json.loads(_cli(state, "webhook", "list", "--json").stdout)] == ["gh"]


def test_an_endpoint_without_a_credential_is_warned_about(tmp_path: Path):
    state = _state(tmp_path)
    set_it = _cli(state, "config", "set", "webhooks.endpoints", json.dumps({"ci": {"messageTemplate": "go"}}))
    assert set_it.returncode == 0, set_it.stderr
    assert "warning: webhook ci: has no credential (secretEnv or hmacSecretEnv)" in set_it.stderr
    doctor = _cli(state, "doctor")
    assert "webhook ci" in doctor.stdout and "refuses every call" in doctor.stdout
    unset_var = _cli(state, "config", "set", "webhooks.endpoints.ci.secretEnv", "NOT_SET_ANYWHERE")
    assert "NOT_SET_ANYWHERE is set neither in the environment nor in" in unset_var.stderr
    listed = _cli(state, "webhook", "list")
    assert "MISSING" in listed.stdout and "warning: webhook ci" in listed.stderr
    refused = _cli(state, "webhook", "test", "ci")
    assert refused.returncode != 0 and "NOT_SET_ANYWHERE" in refused.stderr
    plain = _cli(state, "config", "set", "tasks.maxAttempts", "4")  # another block: no webhook warning
    assert plain.returncode == 0 and "warning" not in plain.stderr


def test_test_sends_a_signed_sample_to_the_running_serve_and_github_signatures_work(tmp_path: Path):
    state = _state(tmp_path)
    _cli(state, "webhook", "add", "ci", "--template", "Build {{body.build.id}} failed", "--stdin",
         stdin=SECRET + "\n")
    _cli(state, "webhook", "add", "plain", "--template", "ping {{body.sample}}", "--shared-secret", "--stdin",
         stdin=SECRET + "-plain\n")
    _cli(state, "webhook", "add", "github", "--template", "GitHub {{body.action}} on {{body.repository.full_name}}",
         "--stdin", stdin=SECRET + "-gh\n")
    nothing = _cli(state, "webhook", "test", "ci")
    assert nothing.returncode != 0 and "no serve of" in nothing.stderr
    port = _free_port()
    with FakeLlamaServer() as fake:
        env = _env({"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        serve = subprocess.Popen([str(CLI), "--state-dir", str(state), "serve", "--port", str(port), "--cwd",
                                  str(tmp_path)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                assert serve.poll() is None, "serve exited during start-up"
                try:
                    httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            sent = _cli(state, "webhook", "test", "ci", "--json", env=env)
            assert sent.returncode == 0, sent.stderr
            answer = json.loads(sent.stdout)
            assert answer["status"] == 202 and answer["body"]["build"]["id"] == "sample build.id"
            assert answer["headers"]["X-Webhook-Signature"].startswith("sha256=")
            shared = _cli(state, "webhook", "test", "plain", env=env)
            assert shared.returncode == 0 and "-> 202" in shared.stdout, shared.stdout + shared.stderr
            # what docs/webhooks.md tells a GitHub user: the body signed alone, plus the delivery id
            raw = json.dumps({"action": "opened", "repository": {"full_name": "me/app"}}).encode()
            signature = "sha256=" + hmac.new((SECRET + "-gh").encode(), raw, hashlib.sha256).hexdigest()
            github = httpx.post(f"http://127.0.0.1:{port}/api/webhooks/github", content=raw, timeout=10,
                                headers={"Content-Type": "application/json", "X-Hub-Signature-256": signature,
                                         "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958"})
            assert github.status_code == 202, github.text
        finally:
            serve.terminate()
            serve.wait(timeout=60)
    tasks = json.loads(_cli(state, "task", "list", "--json").stdout)
    assert sorted(t["message"] for t in tasks) == ["Build sample build.id failed", "GitHub opened on me/app",
                                                  "ping true"]
    assert {t["origin"] for t in tasks} == {"webhook"}
