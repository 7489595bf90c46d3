"""`atomic-agent sidecar` spawned as a desktop host would: real pipes, a real llama-server
API (the fake, scripted), every stdout line a schema-valid protocol message."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.sessions.session_store import SessionStore
from tests.plugins.sidecar.sidecar_process import SidecarProcess

WRITE_NOTE = json.dumps([{"tool": "test.note_write", "args": {"name": "note.txt", "text": "from the agent"}}])
REPLY = json.dumps([{"tool": "reply", "args": {"text": "the note is written"}}])


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def transcript_kinds(state: Path, session_id: str) -> list[tuple[str, str | None]]:
    store = SessionStore(state)
    try:
        return [(e.kind, e.status) for e in store.entries(session_id)]
    finally:
        store.close()


def test_full_turn_with_an_approval_round_trip_over_real_pipes(tmp_path: Path, work: Path):
    with FakeLlamaServer(script=[WRITE_NOTE, REPLY]) as fake:
        sidecar = SidecarProcess(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        try:
            hello = sidecar.call("hello", protocolVersion=1, client={"name": "test-host"})
            assert hello["capabilities"]["tracing"] is False  # off by default in sidecar mode
            assert hello["capabilities"]["agent"]["approvalLevel"] == 1
            session = sidecar.call("create_session", workingDir=str(work))["session"]
            turn = sidecar.call("send_message", sessionId=session["id"], text="write a note")
            assert turn["queuePosition"] == 0
            asked = sidecar.event("approval_request", turn["turnId"])
            assert asked["category"] == "fs_write_workspace" and asked["label"] == "file write · workspace"
            assert not (work / "note.txt").exists()
            assert sidecar.call("approval_response", approvalId=asked["approvalId"], decision="once")["approved"]
            reply = sidecar.event("assistant_reply", turn["turnId"])
            finished = sidecar.event("turn_finished", turn["turnId"])
            assert reply["text"] == "the note is written" and finished["status"] == "done"
            assert (work / "note.txt").read_text() == "from the agent"
            assert sidecar.close_stdin_and_wait() == 0
        finally:
            sidecar.kill()
    assert not sidecar.problems, sidecar.problems
    kinds = [m["event"]["type"] for m in sidecar.messages if m["type"] == "event"]
    assert kinds.index("approval_request") < kinds.index("approval_resolved") < kinds.index("assistant_reply")
    assert ("turn_finished", "done") in transcript_kinds(sidecar.state, session["id"])
    assert not list((sidecar.state / "traces").glob("*.ndjson"))  # nothing traced without an opt-in


def test_bad_lines_get_errors_and_the_sidecar_keeps_serving(tmp_path: Path):
    sidecar = SidecarProcess(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": "http://127.0.0.1:9"})
    try:
        sidecar.write(b"this is not json\n")
        assert sidecar.response(None)["error"]["code"] == "parse_error"
        sidecar.write(b'{"type": "hello"}\n')
        assert sidecar.response(None)["error"]["code"] == "invalid_request"
        sidecar.write(b'{"id": 7, "type": "teleport"}\n')
        assert sidecar.response(7)["error"]["code"] == "unknown_request_type"
        sidecar.write(b'{"id": 8, "type": "send_message", "text": "' + b"x" * (10 * 1024 * 1024) + b'"}\n')
        too_long = sidecar.response(None)
        assert too_long["error"]["code"] == "line_too_long"
        sidecar.write(b"\n\n")
        assert sidecar.call("get_capabilities")["protocolVersion"] == 1
        unknown = sidecar.response(sidecar.send("load_session", sessionId="does-not-exist"))
        assert unknown["error"]["code"] == "session_not_found"
        assert sidecar.response(sidecar.send("shutdown"))["ok"]
        assert sidecar.proc.wait(timeout=60) == 0
    finally:
        sidecar.kill()
    assert not sidecar.problems, sidecar.problems
    assert "ready" in sidecar.stderr_text()  # logs go to stderr, never stdout


def test_eof_mid_turn_parks_the_turn_and_withdraws_the_pending_approval(tmp_path: Path, work: Path):
    """End of input is a graceful stop: the step waiting for an approval gets the grace period,
    then is abandoned; the turn is parked (interrupted, answered after the next start)."""
    with FakeLlamaServer(script=[WRITE_NOTE, REPLY]) as fake:
        sidecar = SidecarProcess(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        try:
            turn = sidecar.call("send_message", text="write a note", workingDir=str(work))
            sidecar.event("approval_request", turn["turnId"])
            assert sidecar.close_stdin_and_wait() == 0
        finally:
            sidecar.kill()
    assert not sidecar.problems, sidecar.problems
    events = [e for e in sidecar.events() if e.get("turnId") == turn["turnId"]]
    resolved = next(e for e in events if e["type"] == "approval_resolved")
    assert resolved["outcome"] == "cancelled" and resolved["approved"] is False
    assert next(e for e in events if e["type"] == "turn_finished")["status"] == "interrupted"
    assert any(e["type"] == "error" and e["code"] == "turn_parked" for e in events)
    assert not (work / "note.txt").exists()
    assert transcript_kinds(sidecar.state, turn["sessionId"])[-1] == ("turn_finished", "interrupted")


def test_an_unreachable_server_reports_llm_unavailable_and_session_failed(tmp_path: Path):
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    sidecar = SidecarProcess(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": f"http://127.0.0.1:{dead}"})
    try:
        turn = sidecar.call("send_message", text="hello?")
        unavailable = sidecar.event("llm_unavailable", turn["turnId"])
        assert unavailable["mode"] == "external" and "ATOMIC_AGENT_LLAMA_URL" in unavailable["hint"]
        failed = sidecar.event("session_failed", turn["turnId"])
        assert failed["category"] == "transport"
        error = next(e for e in sidecar.events() if e["type"] == "error")
        assert error["code"] == "step_error:transport"
        assert sidecar.close_stdin_and_wait() == 0
    finally:
        sidecar.kill()
    assert not sidecar.problems, sidecar.problems


@pytest.mark.llama_server
def test_a_turn_against_the_real_llama_server(tmp_path: Path, work: Path, llama_server):
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "7"}
    sidecar = SidecarProcess(tmp_path, env, "--no-approval")
    try:
        assert sidecar.call("get_capabilities")["agent"]["approvalLevel"] == 5
        turn = sidecar.call("send_message", text="Say hello.", workingDir=str(work))
        finished = sidecar.event("turn_finished", turn["turnId"])
        assert finished["status"] in ("done", "failed")  # the tiny model may wander; the protocol must hold
        assert finished["steps"] >= 1
        assert sidecar.close_stdin_and_wait() == 0
    finally:
        sidecar.kill()
    assert not sidecar.problems, sidecar.problems
    kinds = [e["type"] for e in sidecar.events()]
    assert kinds[:3] == ["turn_queued", "turn_started", "step_started"] and "text_delta" in kinds
