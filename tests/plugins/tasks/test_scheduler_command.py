"""`atomic-agent scheduler` through the real console script: a task created while no host ran
fires once the scheduler starts, an interval task fires again on the tick, and SIGTERM ends
the process cleanly. The model is the fake llama-server on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import CLI, run_cli

CONFIG = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
          "tasks": {"schedulerTickMs": 200, "minIntervalMs": 1000}}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLlamaServer]:
    with FakeLlamaServer() as server:
        yield server


def _env(fake: FakeLlamaServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
    return env


def _task(state: Path, fake: FakeLlamaServer, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["--state-dir", str(state), "task", *args], env=_env(fake), timeout=120)


def _history(state: Path, fake: FakeLlamaServer, task_id: str) -> list[dict]:
    return json.loads(_task(state, fake, "history", task_id, "--json").stdout)


def test_scheduler_runs_due_tasks_until_sigterm(tmp_path: Path, fake: FakeLlamaServer):
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps(CONFIG))
    once = json.loads(_task(state, fake, "create", "say hello", "--json").stdout)
    every = json.loads(_task(state, fake, "create", "ping", "--every", "1", "--json").stdout)
    log = (tmp_path / "scheduler.log").open("w+")
    child = subprocess.Popen([str(CLI), "--state-dir", str(state), "scheduler"], env=_env(fake),
                             stdout=log, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if (child.poll() is None and any(r["status"] == "completed" for r in _history(state, fake, once["id"]))
                    and sum(r["status"] == "completed" for r in _history(state, fake, every["id"])) >= 2):
                break
            time.sleep(0.5)
        assert child.poll() is None, "the scheduler exited on its own"
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    log.seek(0)
    output = log.read()
    assert "atomic-agent scheduler: running due tasks every 0.2 s" in output, output
    assert "stopping" in output
    assert [r["status"] for r in _history(state, fake, once["id"])] == ["completed"]
    assert sum(r["status"] == "completed" for r in _history(state, fake, every["id"])) >= 2


def test_scheduler_refuses_when_tasks_are_off(tmp_path: Path, fake: FakeLlamaServer):
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"tasks": {"schedulerEnabled": False}}))
    result = run_cli(["--state-dir", str(state), "scheduler"], env=_env(fake), timeout=60)
    assert result.returncode != 0
    assert "tasks.schedulerEnabled = false" in result.stderr and "config set" in result.stderr


def test_scheduler_help_names_what_it_does():
    result = run_cli(["scheduler", "--help"])
    assert result.returncode == 0 and "Run due tasks until stopped" in result.stdout
