"""Issue 32: a real `serve` process is killed (SIGKILL) while a shell call waits on its
approval; after a restart the approval is still pending, is answered from the CLI (not the
surface that first showed it), and the frozen call runs exactly once: the turn resumes from
the answer, a late answer over HTTP hears who answered first, and another kill and restart
runs nothing again."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.plugins.serve.test_serve_subprocess import ATOMIC_AGENT, WAIT_S, child_env, free_port, wait_until_up

API_KEY = "durable-approvals-key-" + "0" * 24
AUTH = {"Authorization": f"Bearer {API_KEY}"}


def start_serve(tmp_path: Path, state: Path, port: int, fake_url: str, log: str) -> subprocess.Popen[bytes]:
    env = child_env(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake_url, "ATOMIC_AGENT_API_KEY": API_KEY})
    with (tmp_path / log).open("wb") as stderr:
        proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(state), "serve", "--port", str(port),
                                 "--cwd", str(tmp_path / "work")], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    wait_until_up(f"http://127.0.0.1:{port}", proc)
    return proc


def cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ATOMIC_AGENT), "--state-dir", str(state), "approvals", *args], capture_output=True,
                          text=True, timeout=WAIT_S, env=child_env(state, {}))


def wait_for(check: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def pending(base: str) -> list[dict[str, Any]]:
    return httpx.get(f"{base}/api/approvals", headers=AUTH, timeout=WAIT_S).json()["data"]


def test_kill_9_with_an_approval_pending_then_approve_from_the_cli_runs_the_call_once(tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    state.mkdir()
    work.mkdir()
    (state / "config.json").write_text(json.dumps({
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}))
    marker = work / "marker"
    call = json.dumps([{"tool": "os.shell.run", "args": {"cmd": "sh", "args": ["-c", "echo ran >> marker"]}}])
    reply = json.dumps([{"tool": "reply", "args": {"text": "resumed"}}])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeLlamaServer(script=[call, reply, reply]) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve1.stderr")
        try:
            body = {"model": "atomic-agent", "messages": [{"role": "user", "content": "append a line"}]}
            threading.Thread(target=lambda: _swallow(lambda: httpx.post(
                f"{base}/v1/chat/completions", json=body, timeout=WAIT_S,
                headers={"X-Atomic-Session": "new", **AUTH})), daemon=True).start()
            shown = wait_for(lambda: pending(base), "the approval on serve")
            approval_id, session_id = shown[0]["approvalId"], shown[0]["sessionId"]
            assert shown[0]["tool"] == "os.shell.run" and shown[0]["category"].startswith("shell")
        finally:
            proc.kill()  # SIGKILL: no drain, no goodbye
            proc.wait(timeout=WAIT_S)
        assert not marker.exists()

        proc = start_serve(tmp_path, state, port, fake.base_url, "serve2.stderr")
        try:
            listed = json.loads(cli(state, "list", "--json").stdout)
            assert [r["approvalId"] for r in listed] == [approval_id] and listed[0]["state"] == "pending"
            assert listed[0]["call"]["argv"][-1] == "echo ran >> marker"
            # the restarted server shows it again, under the same id
            wait_for(lambda: [a for a in pending(base) if a["approvalId"] == approval_id], "the approval shown again")
            answered = cli(state, "answer", approval_id, "once")
            assert answered.returncode == 0, answered.stderr
            wait_for(lambda: marker.exists(), "the frozen call to run")
            late = httpx.post(f"{base}/api/approvals/{approval_id}", json={"decision": "deny"}, headers=AUTH,
                              timeout=WAIT_S)
            assert late.status_code == 410 and "already answered 'once' by operator via cli" in late.text
            again = cli(state, "answer", approval_id, "deny")
            assert again.returncode != 0 and "already answered" in again.stderr
            wait_for(lambda: _replied(base, session_id), "the resumed turn's reply")
        finally:
            proc.kill()
            proc.wait(timeout=WAIT_S)

        proc = start_serve(tmp_path, state, port, fake.base_url, "serve3.stderr")
        try:
            time.sleep(0.5)  # give a wrong re-run every chance to happen
        finally:
            proc.kill()
            proc.wait(timeout=WAIT_S)
    assert marker.read_text() == "ran\n"  # exactly once over three processes
    record = json.loads(cli(state, "show", approval_id).stdout)
    assert record["state"] == "approved" and record["usedAt"] and record["surface"] == "cli"
    audit = [json.loads(line) for line in (state / "audit" / "approvals.ndjson").read_text().splitlines()]
    mine = [a for a in audit if a.get("approvalId") == approval_id]
    assert [a["reason"] for a in mine] == ["asked", "user"] and mine[-1]["surface"] == "cli"


def _replied(base: str, session_id: str) -> bool:
    session = httpx.get(f"{base}/api/sessions/{session_id}", headers=AUTH, timeout=WAIT_S)
    return session.status_code == 200 and "resumed" in session.text


def _swallow(fn: Any) -> None:
    try:
        fn()
    except httpx.HTTPError:
        pass  # the server was killed under this request


def _status_turns(state: Path) -> dict[str, Any]:
    out = subprocess.run([str(ATOMIC_AGENT), "--state-dir", str(state), "status", "--json"], capture_output=True,
                         text=True, timeout=WAIT_S, env=child_env(state, {}))
    lines = json.loads(out.stdout)["lines"]
    return next(line for line in lines if line.get("section") == "sessions" and line.get("name") == "turns")


def _turn_summary(base: str, session_id: str) -> dict[str, Any]:
    view = httpx.get(f"{base}/api/sessions/{session_id}", headers=AUTH, timeout=WAIT_S).json()
    return dict(view["turnSummaries"][0])


def test_a_turn_killed_while_its_approval_is_pending_is_parked_on_every_view_and_a_denial_tells_the_model(
        tmp_path: Path) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    state.mkdir()
    work.mkdir()
    (state / "config.json").write_text(json.dumps({
        "plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}))
    marker = work / "marker"
    call = json.dumps([{"tool": "os.shell.run", "args": {"cmd": "sh", "args": ["-c", "echo ran >> marker"]}}])
    reply = json.dumps([{"tool": "reply", "args": {"text": "understood, not run"}}])
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with FakeLlamaServer(script=[call, reply, reply]) as fake:
        proc = start_serve(tmp_path, state, port, fake.base_url, "serve1.stderr")
        try:
            body = {"model": "atomic-agent", "messages": [{"role": "user", "content": "append a line"}]}
            threading.Thread(target=lambda: _swallow(lambda: httpx.post(
                f"{base}/v1/chat/completions", json=body, timeout=WAIT_S,
                headers={"X-Atomic-Session": "new", **AUTH})), daemon=True).start()
            shown = wait_for(lambda: pending(base), "the approval on serve")
            approval_id, session_id = shown[0]["approvalId"], shown[0]["sessionId"]
        finally:
            proc.kill()
            proc.wait(timeout=WAIT_S)

        proc = start_serve(tmp_path, state, port, fake.base_url, "serve2.stderr")
        try:
            wait_for(lambda: [a for a in pending(base) if a["approvalId"] == approval_id], "the approval shown again")
            # the ledger, `status` and the session view all say what the turn waits for; none says interrupted
            turns = _status_turns(state)
            parked = turns["detail"]["parked"]
            assert [p["sessionId"] for p in parked] == [session_id] and approval_id in parked[0]["waitingFor"]
            assert "1 parked" in turns["summary"] and turns["detail"]["running"] == []
            summary = _turn_summary(base, session_id)
            assert summary["state"] == "parked" and approval_id in summary["reason"]
            session = httpx.get(f"{base}/api/sessions/{session_id}", headers=AUTH, timeout=WAIT_S).json()
            assert not [e for e in session["entries"] if e["kind"] == "failure_note"]
            # answered from serve's HTTP route, a different surface than the one the record is listed on
            denied = httpx.post(f"{base}/api/approvals/{approval_id}", json={"decision": "deny"}, headers=AUTH,
                                timeout=WAIT_S)
            assert denied.status_code == 200, denied.text
            wait_for(lambda: _turn_summary(base, session_id)["state"] == "resumed", "the parked turn to resume")
            wait_for(lambda: "understood, not run" in httpx.get(f"{base}/api/sessions/{session_id}", headers=AUTH,
                                                                timeout=WAIT_S).text, "the continuation's reply")
            assert _status_turns(state)["detail"]["parked"] == []
            entries = httpx.get(f"{base}/api/sessions/{session_id}", headers=AUTH, timeout=WAIT_S).json()["entries"]
            results = [e["text"] for e in entries if e["kind"] == "tool_result"]
            assert len(results) == 1 and "not approved" in results[0]
        finally:
            proc.kill()
            proc.wait(timeout=WAIT_S)
        # the model read the denial in the continuation's prompt: it is told, not left guessing
        assert results[0] in fake.completion_bodies[-1]["prompt"]
    assert not marker.exists()
    assert json.loads(cli(state, "show", approval_id).stdout)["state"] == "denied"
