"""Class: a second `atomic-agent telegram run` on one state dir. It used to print `lock_held`
and then sit there forever (no channel, but the process up). It now exits non-zero at once
with a message naming the holder's pid: before anything starts when the lock is already held,
and as soon as its channel meets the lock when it lost a race to another start."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram import instance_lock
from atomic_agent.plugins.telegram.foreground_host import run_foreground
from atomic_agent.plugins.telegram.instance_lock import LockHeldError
from tests.cli.run_cli import run_cli

from .channel_harness import boot_state, start_runtime, until, write_state
from .fake_bot_api import FakeBotApi

PROMPTLY_S = 20.0  # generous for a loaded 2-core machine; "never exits" is what is being ruled out

HOLDER = """
import fcntl, os, sys, time
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
handle.seek(0); handle.truncate(); handle.write(sys.argv[2].replace("PID", str(os.getpid()))); handle.flush()
print("held", flush=True)
time.sleep(120)
"""


def _hold(state: Path, content: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(state / "telegram.lock"), content],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize(("content", "named"), [("PID\n", "pid {pid}"), ("", "does not name"),
                                                ("garbage", "does not name")])
def test_lock_held_second_telegram_run_exits_non_zero_promptly(tmp_path: Path, bot_api: FakeBotApi, content: str,
                                                               named: str) -> None:
    state = write_state(tmp_path / "state", bot_api)
    holder = _hold(state, content)
    try:
        started = time.monotonic()
        result = run_cli(["--state-dir", str(state), "telegram", "run"], timeout=PROMPTLY_S + 10)
        elapsed = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.returncode == 1, result.stderr
    assert elapsed < PROMPTLY_S
    assert "lock_held" in result.stderr and named.format(pid=holder.pid) in result.stderr
    assert "Traceback" not in result.stderr and "--state-dir" in result.stderr


async def test_lock_held_a_run_that_lost_the_race_exits_naming_the_winner(tmp_path: Path, bot_api: FakeBotApi,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    state = write_state(tmp_path / "state", bot_api)
    first = await start_runtime(state, ScriptedProvider())
    try:
        await until(lambda: first.service("telegram").status()["state"] == "up", what="up")
        real = instance_lock.holder_pid
        probes: list[int] = []

        def free_at_first(state_dir: Path) -> int | None:  # the other start took the lock right after the probe
            probes.append(1)
            return None if len(probes) == 1 else real(state_dir)

        monkeypatch.setattr(instance_lock, "holder_pid", free_at_first)
        with pytest.raises(LockHeldError, match=f"pid {os.getpid()}"):
            await run_foreground(boot_state(state), provider=ScriptedProvider())
        assert len(probes) >= 2  # the probe before start, then the one naming the winner
        assert first.service("telegram").status()["state"] == "up"  # the winner is untouched
    finally:
        await first.close()
