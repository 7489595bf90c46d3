"""`atomic-agent status` through the real console script: the fake llama-server on loopback as
the model (started by nobody in this state dir), a real `serve` process as the host, tasks
made and run through the CLI; and how the command treats a plugin whose report is broken."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import CLI, run_cli

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
         "tasks": {"schedulerTickMs": 3_600_000}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env.update(extra or {})
    return env


def _status(state: Path) -> dict:
    result = run_cli(["--state-dir", str(state), "status", "--json"], env=_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _line(status: dict, section: str, name: str) -> dict:
    found = [line for line in status["lines"] if (line["section"], line["name"]) == (section, name)]
    assert len(found) == 1, [(line["section"], line["name"]) for line in status["lines"]]
    return found[0]


def test_status_shows_model_host_turns_tasks_and_channels(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    with FakeLlamaServer() as fake:
        # the scheduler's runner (the lock status looks for) appears at a host's first tick
        (state / "config.json").write_text(json.dumps({**QUIET, "tasks": {"schedulerTickMs": 300},
                                                       "llama": {"host": "127.0.0.1", "port": fake.port}}))
        cli = ["--state-dir", str(state)]
        # a task that ran (a session and a turn), and one due later
        run_cli([*cli, "task", "create", "say hello"], env=_env(), timeout=60)
        assert run_cli([*cli, "task", "tick"], env=_env(), timeout=120).returncode == 0
        run_cli([*cli, "task", "create", "water the plants", "--in", "30"], env=_env(), timeout=60)

        quiet = _status(state)
        assert _line(quiet, "model", "llama-server")["state"] == "ok"
        assert f"model {fake.model_alias}" in _line(quiet, "model", "llama-server")["summary"]
        assert "0 of 2 slot(s) in use" in _line(quiet, "model", "llama-server")["summary"]
        assert _line(quiet, "hosts", "serve")["state"] == "off"
        turns = _line(quiet, "sessions", "turns")
        assert turns["summary"] == "0 running, 0 queued; 1 session(s) in all"
        tasks = _line(quiet, "tasks", "tasks")
        assert tasks["detail"]["counts"] == {"pending": 1, "completed": 1}
        assert "'water the plants'" in tasks["summary"]
        assert _line(quiet, "tasks", "scheduler")["state"] == "warn"  # a task waits and no host runs
        assert _line(quiet, "channels", "telegram")["state"] == "off"
        assert _line(quiet, "approvals", "records")["summary"] == "0 pending"

        port = _free_port()
        serve = subprocess.Popen([str(CLI), *cli, "serve", "--port", str(port), "--cwd", str(tmp_path)],
                                 env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                assert serve.poll() is None, "serve exited during start-up"
                try:
                    httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            busy = _status(state)
            host = _line(busy, "hosts", "serve")
            assert host["state"] == "ok" and host["detail"]["url"] == f"http://127.0.0.1:{port}"
            assert _line(busy, "approvals", "records")["summary"] == "0 pending"
            while _line(busy, "tasks", "scheduler")["state"] != "ok" and time.monotonic() < deadline:
                time.sleep(0.2)
                busy = _status(state)
            assert _line(busy, "tasks", "scheduler")["summary"] == "running in 1 process(es)"
            text = run_cli([*cli, "status"], env=_env(), timeout=60).stdout
            assert f"listening at http://127.0.0.1:{port} (pid {serve.pid})" in text
        finally:
            serve.terminate()
            assert serve.wait(timeout=60) == 0
        assert _line(_status(state), "hosts", "serve")["state"] == "off"  # its address file went with it


def test_status_lists_the_last_failed_turns(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({**QUIET, "tasks": {"maxAttempts": 1}}))
    with FakeLlamaServer(default_reply="this is not a tool call") as fake:
        env = _env({"ATOMIC_AGENT_LLAMA_URL": fake.base_url})
        run_cli(["--state-dir", str(state), "task", "create", "say hello"], env=env, timeout=60)
        run_cli(["--state-dir", str(state), "task", "tick"], env=env, timeout=120)
        result = run_cli(["--state-dir", str(state), "status"], env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "needs attention:" in result.stdout
    assert "(scheduler) failed:" in result.stdout  # the failed turn, with its category
    assert "— `atomic-agent task logs " in result.stdout  # and the task it ended


def test_a_broken_status_report_is_one_error_line_and_the_rest_still_shows(tmp_path: Path):
    from atomic_agent.api import fresh_plugin_host, hookimpl
    from atomic_agent.plugins.doctor_cli.status_command import gather

    class Good:
        @hookimpl
        def report_status(self, state_dir: Path):
            return [{"section": "channels", "name": "pager", "state": "ok", "summary": "fine"}]

    class Raises:
        @hookimpl
        def report_status(self, state_dir: Path):
            raise RuntimeError("boom")

    class Malformed:
        @hookimpl
        def report_status(self, state_dir: Path):
            return [{"section": "channels", "name": "odd", "state": "green", "summary": "?"}, "text"]

    host = fresh_plugin_host()
    for plugin, name in ((Good(), "good"), (Raises(), "raises"), (Malformed(), "malformed")):
        host.register(plugin, name)
    lines = [line for line in gather(host, tmp_path, config=None) if line["plugin"] != "core"]
    assert [(line["section"], line["name"], line["state"]) for line in lines] == [
        ("channels", "pager", "ok"), ("errors", "plugin malformed", "error"), ("errors", "plugin malformed", "error"),
        ("errors", "plugin raises", "error")]
    assert "has state 'green'" in lines[1]["summary"] and "returned str" in lines[2]["summary"]
    assert lines[3]["summary"] == "raised RuntimeError: boom"


def test_status_help():
    result = run_cli(["status", "--help"])
    assert result.returncode == 0 and "--json" in result.stdout and "approvals, channels, tasks" in result.stdout


def test_status_shows_pending_approvals_of_every_host_from_the_durable_records(tmp_path: Path):
    """Whichever process asked (a CLI run, Telegram, serve), its pending approval is a record
    in approvals.sqlite, and `status` lists it with how to answer it; an expired one is not pending."""
    from atomic_agent.approval.approval_records import APPROVAL, ApprovalRecords, FrozenCall

    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps(QUIET))
    assert _line(_status(state), "approvals", "records")["summary"] == "0 pending"
    assert not (state / "approvals.sqlite").exists()  # status reads; it creates no state file
    records = ApprovalRecords.for_state_dir(state)
    try:
        asked = records.create(kind=APPROVAL, session_id="s1", category="shell", level=3,
                               summary="rm -rf build/", frozen=FrozenCall("os.shell.run", '{"cmd":"rm -rf build/"}'),
                               ttl_s=600)
        records.create(kind=APPROVAL, session_id="s2", category="shell", level=3, summary="expired already",
                       frozen=FrozenCall("os.shell.run"), ttl_s=0)
    finally:
        records.close()
    line = _line(_status(state), "approvals", "records")
    assert line["state"] == "warn" and line["summary"] == "1 pending"
    assert [p["approvalId"] for p in line["detail"]["pending"]] == [asked.id]
    assert f"atomic-agent approvals answer {asked.id}" in line["problems"][0]
