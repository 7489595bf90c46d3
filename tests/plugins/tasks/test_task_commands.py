"""`atomic-agent task ...` through the real console script; `run` and `tick` boot the runtime
against the fake llama-server on loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
         "tasks": {"schedulerTickMs": 3_600_000}}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLlamaServer]:
    with FakeLlamaServer() as server:
        yield server


def _cli(state: Path, fake: FakeLlamaServer, *args: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
    return run_cli(["--state-dir", str(state), "task", *args], env=env, timeout=120)


@pytest.fixture
def state(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(QUIET))
    return root


def test_create_list_tick_history_and_an_idempotent_cancel_through_the_cli(state: Path, fake: FakeLlamaServer):
    now = _cli(state, fake, "create", "say hello", "--json")
    assert now.returncode == 0, now.stderr
    task_id = json.loads(now.stdout)["id"]
    later = json.loads(_cli(state, fake, "create", "later", "--in", "60", "--json").stdout)
    nightly = json.loads(_cli(state, fake, "create", "nightly", "--cron", "0 3 * * *", "--tz", "Asia/Tokyo",
                              "--json").stdout)
    assert nightly["sessionId"] and nightly["schedule"] == {"kind": "cron", "expression": "0 3 * * *",
                                                             "tz": "Asia/Tokyo"}
    tick = _cli(state, fake, "tick")
    assert tick.returncode == 0, tick.stderr
    assert f"task {task_id}: succeeded" in tick.stdout and "claimed 1" in tick.stdout
    listed = {t["id"]: t["status"] for t in json.loads(_cli(state, fake, "list", "--json").stdout)}
    assert listed == {task_id: "completed", later["id"]: "pending", nightly["id"]: "pending"}
    history = json.loads(_cli(state, fake, "history", task_id, "--json").stdout)
    assert [(r["status"], bool(r["turnId"])) for r in history] == [("completed", True)]
    first = _cli(state, fake, "cancel", later["id"])
    second = _cli(state, fake, "cancel", later["id"])
    assert first.stdout == second.stdout == f"task {later['id']} cancelled\n"
    done = _cli(state, fake, "cancel", task_id)
    assert done.stdout == f"task {task_id} completed\n"  # a terminal task is left as it is


def test_run_runs_one_pending_task_now_whatever_its_due_time(state: Path, fake: FakeLlamaServer):
    later = json.loads(_cli(state, fake, "create", "early bird", "--in", "600", "--json").stdout)
    ran = _cli(state, fake, "run", later["id"])
    assert ran.returncode == 0, ran.stderr
    assert f"task {later['id']}: succeeded" in ran.stdout
    again = _cli(state, fake, "run", later["id"])
    assert "was not pending; nothing ran" in again.stdout


@pytest.mark.parametrize(("args", "said"), [
    (["create", "x", "--cron", "every day"], "invalid expression"),
    (["create", "x", "--cron", "0 9 * * *", "--tz", "Moon/Base"], "invalid tz"),
    (["create", "x", "--every", "1"], "under the minimum interval"),
    (["create", "x", "--at", "2001-01-01T00:00:00Z"], "in the past"),
    (["create", "x", "--at", "soon"], "neither epoch milliseconds nor an ISO 8601 time"),
    (["create", "x", "--in", "5", "--every", "60"], "give one schedule"),
    (["create", "x", "--session", "no-such-session"], "does not exist"),
    (["show", "nope"], "no task 'nope'"),
    (["cancel", "nope"], "no task 'nope'"),
])
def test_bad_cli_input_is_a_clear_error_and_writes_no_task(state: Path, fake: FakeLlamaServer, args: list[str],
                                                           said: str):
    result = _cli(state, fake, *args)
    assert result.returncode != 0 and said in result.stderr, result.stderr
    assert json.loads(_cli(state, fake, "list", "--json").stdout) == []
