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
from tests.plugins.os.test_shell_run import Asked
from tests.process_liveness import alive, gone_soon

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


def _bg_bare(pidfile: Path) -> str:
    """`_bg` with absolute paths: it runs with an empty environment (no PATH)."""
    return f"/bin/sh -c 'echo $$ > {pidfile}; exec /bin/sleep 300'"


_DAEMON = ("import os, sys, time; os.fork() and os._exit(0); os.setsid(); os.fork() and os._exit(0); "
           "open(sys.argv[1], 'w').write(str(os.getpid())); [os.close(fd) for fd in (0, 1, 2)]; time.sleep(300)")

# children that clear their environment (no tree token) and leave their parent: init would adopt them
UNMARKED_ESCAPES = {
    "env-i-setsid-f": "env -i /usr/bin/setsid -f {bg} > /dev/null 2>&1",
    "env-i-double-fork": "env -i /bin/sh -c '(/usr/bin/setsid {bg} > /dev/null 2>&1 &)'",
    "env-i-python-daemon": f"env -i {sys.executable} -c \"{_DAEMON}\" {{pidfile}}",
    "env-i-nohup-setsid": "(env -i /usr/bin/nohup /usr/bin/setsid {bg} > /dev/null 2>&1 &)",
}


def _unmarked(escape: str, pidfile: Path) -> str:
    bg = _bg_bare(pidfile).replace("'", "'\\''") if escape == "env-i-double-fork" else _bg_bare(pidfile)
    return UNMARKED_ESCAPES[escape].format(bg=bg, pidfile=pidfile)


@pytest.mark.parametrize("how", ["cancel", "timeout"])
@pytest.mark.parametrize("escape", sorted(UNMARKED_ESCAPES))
async def test_background_children_a_stop_kills_an_orphan_without_the_token(tmp_path: Path, how: str,
                                                                             escape: str) -> None:
    """Cleared environment plus a new parent: the agent, as subreaper, adopts it and the sweep finds it."""
    pidfile = tmp_path / "bg.pid"
    cancelled = asyncio.Event()
    line = _unmarked(escape, pidfile) + "; sleep 300"
    run = asyncio.ensure_future(run_process(["bash", "-c", line], cwd=tmp_path, env=dict(os.environ),
                                            timeout_s=2.0 if how == "timeout" else TIMEOUT_S, cancelled=cancelled))
    pid = await asyncio.to_thread(_pid_from, pidfile)
    assert pid is not None and alive(pid)
    assert b"ATOMIC_AGENT_PROCESS_TREE" not in Path(f"/proc/{pid}/environ").read_bytes()
    if how == "cancel":
        cancelled.set()
    outcome = await asyncio.wait_for(run, PROMPT_S + 5)
    assert outcome.cancelled if how == "cancel" else outcome.timed_out
    assert gone_soon(pid), f"{escape}: {pid} survived the {how}"


async def test_background_children_the_agents_own_children_survive_a_sweep(tmp_path: Path) -> None:
    """A helper the agent starts itself during a command (in its own session, no token) is not the command's."""
    pidfile = tmp_path / "bg.pid"
    cancelled = asyncio.Event()
    run = asyncio.ensure_future(run_process(["bash", "-c", _unmarked("env-i-setsid-f", pidfile) + "; sleep 300"],
                                            cwd=tmp_path, env=dict(os.environ), timeout_s=TIMEOUT_S,
                                            cancelled=cancelled))
    pid = await asyncio.to_thread(_pid_from, pidfile)
    helper = subprocess.Popen(["sleep", "300"], env={})  # like ripgrep or a stdio MCP server
    try:
        cancelled.set()
        await asyncio.wait_for(run, PROMPT_S + 5)
        assert pid is not None and gone_soon(pid)
        assert helper.poll() is None and alive(helper.pid)
    finally:
        helper.kill()
        helper.wait()


@pytest.mark.parametrize("escape", ["env-i-setsid-f", "env-i-python-daemon"])
def test_background_children_an_orphan_without_the_token_dies_with_the_agent(tmp_path: Path, escape: str) -> None:
    pidfile = tmp_path / "bg.pid"
    program = textwrap.dedent(f"""
        import asyncio, os, sys
        from pathlib import Path
        from atomic_agent.plugins.os.shell.process_runner import run_process
        out = asyncio.run(run_process(["sh", "-c", {_unmarked(escape, pidfile)!r}], cwd=Path("{tmp_path}"),
                                      env=dict(os.environ), timeout_s=60))
        print("returned", out.exit_code, flush=True)
        sys.stdin.readline()
    """)
    agent = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=Path(__file__).resolve().parents[2])
    assert agent.stdin is not None and agent.stdout is not None
    try:
        assert agent.stdout.readline().strip() == "returned 0"
        pid = _pid_from(pidfile)
        assert pid is not None and alive(pid)
        agent.stdin.close()
        assert agent.wait(timeout=30) == 0
        assert gone_soon(pid), f"{escape}: the orphan outlived the agent"
    finally:
        agent.kill()
        agent.wait()


async def test_background_children_an_adopted_orphan_that_exits_is_reaped(tmp_path: Path) -> None:
    """As subreaper the agent inherits the orphans' zombies too: later commands collect them."""
    pidfile = tmp_path / "bg.pid"
    line = f"env -i /usr/bin/setsid -f /bin/sh -c 'echo $$ > {pidfile}; exec /bin/sleep 0.2' > /dev/null 2>&1"
    assert (await run_process(["bash", "-c", line], cwd=tmp_path, env=dict(os.environ), timeout_s=30)).ok
    pid = await asyncio.to_thread(_pid_from, pidfile)
    assert pid is not None
    await asyncio.to_thread(gone_soon, pid)
    for _ in range(2):  # a zombie is collected when a second look still finds it one
        await run_process(["true"], cwd=tmp_path, env=dict(os.environ), timeout_s=30)
    assert not Path(f"/proc/{pid}").exists(), "the adopted orphan's zombie was never reaped"
