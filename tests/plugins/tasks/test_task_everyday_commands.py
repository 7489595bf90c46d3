"""`atomic-agent task logs|show|edit|pause|resume|delete` through the real console script, the
model being the fake llama-server on loopback (`tick` runs what is due)."""

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


@pytest.fixture
def state(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    root.mkdir()
    (root / "config.json").write_text(json.dumps(QUIET))
    return root


def _cli(state: Path, fake: FakeLlamaServer, *args: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env["ATOMIC_AGENT_LLAMA_URL"] = fake.base_url
    return run_cli(["--state-dir", str(state), "task", *args], env=env, timeout=120)


def _json(result) -> object:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_logs_and_show_carry_each_runs_reply_and_its_tool_calls(state: Path, fake: FakeLlamaServer):
    task = _json(_cli(state, fake, "create", "read the notes", "--json"))
    fake.push(json.dumps([{"tool": "os.fs.read", "args": {"path": "pyproject.toml"}}]),
              json.dumps([{"tool": "reply", "args": {"text": "the notes say: ship on Friday"}}]))
    assert _cli(state, fake, "tick").returncode == 0
    logs = _cli(state, fake, "logs", task["id"])
    assert logs.returncode == 0, logs.stderr
    assert ": completed, started " in logs.stdout and "took " in logs.stdout
    assert "tools: os.fs.read" in logs.stdout
    assert "the notes say: ship on Friday" in logs.stdout
    runs = _json(_cli(state, fake, "logs", task["id"], "--json"))
    assert [(r["status"], r["reply"]) for r in runs] == [("completed", "the notes say: ship on Friday")]
    assert [c["tool"] for c in runs[0]["toolCalls"] if c["tool"] != "reply"] == ["os.fs.read"]
    shown = _cli(state, fake, "show", task["id"])
    assert "last reply" in shown.stdout and "the notes say: ship on Friday" in shown.stdout
    assert _json(_cli(state, fake, "show", task["id"], "--json"))["runs"][0]["reply"] == "the notes say: ship on Friday"


def test_logs_of_a_task_that_never_ran(state: Path, fake: FakeLlamaServer):
    task = _json(_cli(state, fake, "create", "later", "--in", "60", "--json"))
    assert _cli(state, fake, "logs", task["id"]).stdout == f"task {task['id']} has not run yet\n"
    assert _json(_cli(state, fake, "logs", task["id"], "--json")) == []


def test_a_paused_task_is_skipped_by_the_scheduler_until_resumed(state: Path, fake: FakeLlamaServer):
    task = _json(_cli(state, fake, "create", "say hello", "--json"))
    assert _cli(state, fake, "pause", task["id"]).stdout == f"task {task['id']} paused\n"
    assert _cli(state, fake, "pause", task["id"]).stdout == f"task {task['id']} paused\n"  # safe to repeat
    assert "claimed 0" in _cli(state, fake, "tick").stdout
    assert [t["id"] for t in _json(_cli(state, fake, "list", "--status", "paused", "--json"))] == [task["id"]]
    resumed = _cli(state, fake, "resume", task["id"])
    assert resumed.stdout.startswith(f"task {task['id']} pending, next run ")
    assert f"task {task['id']}: succeeded" in _cli(state, fake, "tick").stdout
    refused = _cli(state, fake, "pause", task["id"])
    assert refused.returncode != 0 and "it is completed; only a pending task can be paused" in refused.stderr


def test_a_paused_task_can_be_cancelled(state: Path, fake: FakeLlamaServer):
    task = _json(_cli(state, fake, "create", "later", "--in", "60", "--json"))
    _cli(state, fake, "pause", task["id"])
    assert _cli(state, fake, "cancel", task["id"]).stdout == f"task {task['id']} cancelled\n"


def test_edit_changes_message_and_schedule_and_speaks_seconds(state: Path, fake: FakeLlamaServer):
    task = _json(_cli(state, fake, "create", "old words", "--in", "60", "--json"))
    assert task["sessionId"] is None
    edited = _json(_cli(state, fake, "edit", task["id"], "--message", "new words", "--every", "120", "--json"))
    assert edited["message"] == "new words"
    assert edited["schedule"]["kind"] == "interval" and edited["schedule"]["everyMs"] == 120_000
    assert edited["sessionId"]  # now recurring: its persistent session was made, as at create
    cron = _json(_cli(state, fake, "edit", task["id"], "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "--json"))
    assert cron["schedule"] == {"kind": "cron", "expression": "0 9 * * 1-5", "tz": "Europe/Berlin"}
    assert cron["sessionId"] == edited["sessionId"]
    text = _cli(state, fake, "edit", task["id"], "--message", "newer words")
    assert text.returncode == 0 and "cron 0 9 * * 1-5 (Europe/Berlin)" in text.stdout
    too_fast = _cli(state, fake, "edit", task["id"], "--every", "5")
    assert too_fast.returncode != 0
    assert "5 s is under the minimum interval of 60 s (tasks.minIntervalMs)" in too_fast.stderr
    assert "ms" not in too_fast.stderr.replace("tasks.minIntervalMs", "")
    zero = _cli(state, fake, "create", "x", "--every", "0")
    assert zero.returncode != 0 and "0 is not a positive number of seconds" in zero.stderr


@pytest.mark.parametrize(("args", "said"), [
    (["edit", "{id}"], "nothing to change"),
    (["edit", "{id}", "--at", "2001-01-01T00:00:00Z"], "in the past"),
    (["edit", "{id}", "--cron", "0 9 * * *", "--every", "60"], "give one schedule"),
    (["edit", "{id}", "--tz", "UTC"], "--tz only goes with --cron"),
    (["edit", "nope", "--message", "x"], "no task 'nope'"),
    (["delete", "nope"], "no task 'nope'"),
    (["edit", "{id}", "--every", "0"], "0 is not a positive number of seconds"),
])
def test_bad_edits_are_clear_errors_and_change_nothing(state: Path, fake: FakeLlamaServer, args: list[str], said: str):
    task = _json(_cli(state, fake, "create", "keep me", "--in", "60", "--json"))
    result = _cli(state, fake, *[a.replace("{id}", task["id"]) for a in args])
    assert result.returncode != 0 and said in result.stderr, result.stderr
    after = _json(_cli(state, fake, "show", task["id"], "--json"))
    assert (after["message"], after["schedule"], after["status"]) == ("keep me", task["schedule"], "pending")


def test_delete_removes_the_task_and_its_history(state: Path, fake: FakeLlamaServer):
    done = _json(_cli(state, fake, "create", "say hello", "--json"))
    _cli(state, fake, "tick")
    kept = _json(_cli(state, fake, "create", "later", "--in", "60", "--json"))
    assert _cli(state, fake, "delete", done["id"]).stdout == f"task {done['id']} deleted\n"
    assert [t["id"] for t in _json(_cli(state, fake, "list", "--json"))] == [kept["id"]]
    gone = _cli(state, fake, "logs", done["id"])
    assert gone.returncode != 0 and f"no task '{done['id']}'" in gone.stderr
    edited_done = _cli(state, fake, "edit", kept["id"], "--message", "still here")
    assert edited_done.returncode == 0
