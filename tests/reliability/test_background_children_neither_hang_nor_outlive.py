"""Reliability probe, class: background children of a shell command. `(cmd &)`, `nohup cmd &`,
`setsid cmd &`, `cmd & disown` inherit the output pipes; the call waited for the pipes to
close — until its timeout — and a `setsid` child, outside the process group, outlived the
agent. Now the call returns when the command exits (output drained for a short grace), what
still holds the pipes is killed, a cancel or timeout kills the whole tree wherever it went,
and a detached child that let go of the pipes is killed when the agent exits."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from atomic_agent.plugins.os.shell.exec_config import ExecConfig
from atomic_agent.plugins.os.shell.process_runner import run_process
from atomic_agent.plugins.os.shell.shell_tool import run_shell
from tests.plugins.os.test_shell_run import Asked, alive, gone_soon

TIMEOUT_S = 60.0  # the old behaviour waited this long; a pass must be far below it
PROMPT_S = 10.0  # generous for a loaded 2-core machine


def _bg(pidfile: Path) -> str:
    """A background program that records its own pid, then sleeps for a long time."""
    return f"sh -c 'echo $$ > {pidfile}; exec sleep 300'"


SPELLINGS = {
    "subshell": "echo before; ({bg} &); echo after",
    "nohup": "echo before; nohup {bg} & echo after",
    "setsid": "echo before; setsid {bg} & echo after",
    "setsid-f": "echo before; setsid -f {bg}; echo after",
    "plain-ampersand": "echo before; {bg} & echo after",
    "disown": "echo before; {bg} & disown; echo after",  # bash only
}


def _pid_from(pidfile: Path) -> int | None:
    deadline = time.monotonic() + PROMPT_S
    while time.monotonic() < deadline:
        if pidfile.exists() and pidfile.read_text().strip():
            return int(pidfile.read_text())
        time.sleep(0.02)
    return None  # killed before it wrote its pid: gone either way


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
async def test_background_children_the_call_returns_when_the_command_exits(tmp_path: Path, spelling: str) -> None:
    pidfile = tmp_path / "bg.pid"
    line = SPELLINGS[spelling].format(bg=_bg(pidfile))
    started = time.monotonic()
    outcome = await run_process(["bash", "-c", line], cwd=tmp_path, env=dict(os.environ), timeout_s=TIMEOUT_S)
    elapsed = time.monotonic() - started
    assert elapsed < PROMPT_S, f"{spelling}: took {elapsed:.1f} s"
    assert not outcome.timed_out and outcome.exit_code == 0
    assert outcome.stdout.text().splitlines()[:2] == ["before", "after"]
    pid = _pid_from(pidfile)
    assert pid is None or gone_soon(pid), f"{spelling}: the background child {pid} still runs"


@pytest.mark.parametrize("spelling", ["nohup", "setsid", "subshell"])
async def test_background_children_through_the_shell_tool(tmp_path: Path, spelling: str) -> None:
    pidfile = tmp_path / "bg.pid"
    asked = Asked(tmp_path)
    started = time.monotonic()
    result = await run_shell({"cmd": SPELLINGS[spelling].format(bg=_bg(pidfile)), "timeout_s": TIMEOUT_S},
                             asked.ctx, ExecConfig())
    assert time.monotonic() - started < PROMPT_S
    assert result.status == "ok", result.summary
    pid = _pid_from(pidfile)
    assert pid is None or gone_soon(pid)


@pytest.mark.parametrize("how", ["cancel", "timeout"])
@pytest.mark.parametrize("escape", ["setsid -w {bg}", "(setsid {bg} &); sleep 300", "setsid {bg} & wait"])
async def test_background_children_a_stop_kills_what_left_the_group(tmp_path: Path, how: str, escape: str) -> None:
    """A child in its own session is out of killpg's reach; the tree token still finds it."""
    pidfile = tmp_path / "bg.pid"
    cancelled = asyncio.Event()
    line = escape.format(bg=_bg(pidfile))
    run = asyncio.ensure_future(run_process(["bash", "-c", line], cwd=tmp_path, env=dict(os.environ),
                                            timeout_s=1.0 if how == "timeout" else TIMEOUT_S, cancelled=cancelled))
    pid = await asyncio.to_thread(_pid_from, pidfile)
    assert pid is not None and alive(pid)
    if how == "cancel":
        cancelled.set()
    outcome = await asyncio.wait_for(run, PROMPT_S + 5)
    assert outcome.cancelled if how == "cancel" else outcome.timed_out
    assert gone_soon(pid), f"{escape}: {pid} survived the {how}"


def test_background_children_a_detached_child_dies_with_the_agent(tmp_path: Path) -> None:
    """One that let go of the pipes is left alone while the agent runs, killed when it exits."""
    pidfile = tmp_path / "bg.pid"
    program = textwrap.dedent(f"""
        import asyncio, os, sys
        from pathlib import Path
        from atomic_agent.plugins.os.shell.process_runner import run_process
        line = "setsid sh -c 'echo $$ > {pidfile}; exec sleep 300' > /dev/null 2>&1 < /dev/null &"
        out = asyncio.run(run_process(["sh", "-c", line], cwd=Path("{tmp_path}"), env=dict(os.environ), timeout_s=60))
        print("returned", out.exit_code, flush=True)
        sys.stdin.readline()  # the agent runs on until the test lets it exit
    """)
    agent = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=Path(__file__).resolve().parents[2])
    assert agent.stdin is not None and agent.stdout is not None
    try:
        assert agent.stdout.readline().strip() == "returned 0"
        pid = _pid_from(pidfile)
        assert pid is not None and alive(pid)  # still running while the agent does
        agent.stdin.close()
        assert agent.wait(timeout=30) == 0
        assert gone_soon(pid), "the detached child outlived the agent"
    finally:
        agent.kill()
        agent.wait()
