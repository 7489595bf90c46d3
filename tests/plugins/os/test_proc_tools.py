"""`os.proc.list` parses real `ps` output; `os.proc.kill` refuses, asks, then signals."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ToolContext
from atomic_agent.plugins.os.proc.proc_tools import proc_tool_specs
from atomic_agent.plugins.os.proc.ps_parse import elapsed_seconds, parse_ps


def specs() -> dict[str, Any]:
    class Bare:
        config = None

    return {s.name: s for s in proc_tool_specs(Bare())}


def context(tmp_path: Path, answer: bool) -> tuple[ToolContext, list[tuple[str, str]]]:
    asked: list[tuple[str, str]] = []

    async def request_approval(category: str, summary: str, **extra: Any) -> bool:
        asked.append((category, summary))
        return answer

    return ToolContext("s", tmp_path, tmp_path, asyncio.Event(), request_approval), asked


@pytest.fixture()
def sleeper():  # noqa: ANN201
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)  # atomic-proc-test"])
    yield proc
    proc.kill()
    proc.wait()


def test_ps_lines_parse_into_records() -> None:
    text = ("    1     0 root      0.0  0.1  1234 Ss   10-02:03:04 /sbin/init splash\n"
            "  321     1 ada      12.5  3.2 99999 R+        01:02 python3 -m http.server 8000\n"
            "    2     0 root      0.0  0.0     0 S         05:00 [kthreadd]\n")
    rows = parse_ps(text)
    assert rows[0]["elapsedS"] == 10 * 86400 + 2 * 3600 + 3 * 60 + 4 and rows[0]["name"] == "init"
    assert rows[1] == {"pid": 321, "ppid": 1, "user": "ada", "cpu": 12.5, "mem": 3.2, "rssKb": 99999, "state": "R+",
                       "elapsedS": 62, "name": "python3", "command": "python3 -m http.server 8000"}
    assert rows[2]["name"] == "[kthreadd]"
    assert elapsed_seconds("garbage") is None


async def test_list_finds_a_running_process_by_filter(tmp_path: Path, sleeper: subprocess.Popen) -> None:
    ctx, _ = context(tmp_path, True)
    result = await specs()["os.proc.list"].run({"filter": "atomic-proc-test"}, ctx)
    assert result.status == "ok" and [p["pid"] for p in result.details["processes"]] == [sleeper.pid]


@pytest.mark.parametrize("pid", [1, 0, -1])
async def test_kill_refuses_init_and_group_pids_without_asking(tmp_path: Path, pid: int) -> None:
    ctx, asked = context(tmp_path, True)
    result = await specs()["os.proc.kill"].run({"pid": pid}, ctx)
    assert result.status == "error" and result.details["refused"] and asked == []


async def test_kill_refuses_the_agents_own_pid(tmp_path: Path) -> None:
    ctx, asked = context(tmp_path, True)
    result = await specs()["os.proc.kill"].run({"pid": os.getpid()}, ctx)
    assert "the agent itself" in result.summary and asked == []


async def test_kill_of_a_missing_pid_is_a_clear_error(tmp_path: Path) -> None:
    ctx, _ = context(tmp_path, True)
    result = await specs()["os.proc.kill"].run({"pid": 4_000_000}, ctx)
    assert "no process with pid" in result.summary


async def test_kill_asks_under_proc_kill_and_denied_leaves_it_running(tmp_path: Path,
                                                                      sleeper: subprocess.Popen) -> None:
    ctx, asked = context(tmp_path, False)
    result = await specs()["os.proc.kill"].run({"pid": sleeper.pid}, ctx)
    assert result.details["denied"] and asked[0][0] == "proc_kill" and "atomic-proc-test" in asked[0][1]
    assert sleeper.poll() is None


async def test_kill_approved_sends_the_signal(tmp_path: Path, sleeper: subprocess.Popen) -> None:
    ctx, _ = context(tmp_path, True)
    result = await specs()["os.proc.kill"].run({"pid": sleeper.pid, "signal": "KILL"}, ctx)
    assert result.status == "ok"
    assert sleeper.wait() == -9


def test_kill_is_gated_and_list_is_a_pure_read() -> None:
    tools = specs()
    assert tools["os.proc.kill"].resource_class.value == "approval_gated"
    assert tools["os.proc.kill"].approval_category == "proc_kill"
    assert tools["os.proc.list"].resource_class.value == "pure_read"
