"""Run one child process with a timeout, output caps and whole-tree cancellation.

The child starts in its own session, and its environment carries a tree token
(process_tree; orphans that cleared it come back to the agent as their subreaper), so a timeout or a cancelled turn kills everything it spawned (a `make` and
its compilers, a pipeline, a `setsid` or double-forked child that left the group), not just
the first process. The shell, git, proc and desktop tools all start their children here.

The call returns when the child exits, not when its output pipes close: a background child
(`(cmd &)`, `nohup cmd &`, `cmd & disown`) inherits the pipes and would hold them open until
the timeout. After the exit, output is drained for a short grace; whatever still holds the
pipes then is killed. (asyncio's `Process.wait()` resolves only once every pipe is closed,
so the exit is watched with `waitid(WNOWAIT)`, which leaves the reaping to asyncio.)
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from .output_capture import CappedOutput
from .process_tree import (
    TREE_ENV,
    become_subreaper,
    forget,
    new_tree_token,
    own_children,
    reap_adopted,
    remember,
    signal_tree,
    ticks_now,
    tree_members,
)

KILL_GRACE_S = 2.0  # SIGTERM first; SIGKILL when the tree is still there after this
DRAIN_GRACE_S = 0.3  # after the child exited: what its pipes still deliver before holders are killed
EXIT_POLL_S = 0.02
READ_CHUNK = 65536


@attrs.define
class ProcessOutcome:
    stdout: CappedOutput
    stderr: CappedOutput
    exit_code: int | None = None
    timed_out: bool = False
    cancelled: bool = False
    spawn_error: str | None = None
    # the child exited but something it started kept our pipes open; the group was killed
    killed_stragglers: bool = False

    @property
    def ok(self) -> bool:
        return self.spawn_error is None and not self.timed_out and not self.cancelled and self.exit_code == 0


def _spawn_error(exc: OSError, argv: Sequence[str], cwd: Path) -> str:
    if isinstance(exc, FileNotFoundError):
        if not cwd.is_dir():
            return f"working directory {cwd} does not exist"
        return f"command not found: {argv[0]!r} (not on PATH and not a path to an executable)"
    if isinstance(exc, PermissionError):
        return f"{argv[0]!r} is not executable (permission denied)"
    if exc.errno == errno.E2BIG:
        return "the argument list is too long for the operating system (E2BIG); pass the data on stdin or in a file"
    return f"could not start {argv[0]!r}: {exc.strerror or exc}"


async def _exited(proc: asyncio.subprocess.Process) -> int | None:
    """Return once the direct child has exited (its exit code when this saw it first)."""
    while proc.returncode is None:
        try:
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # asyncio's watcher reaped it: its callback sets the code soon
            for _ in range(200):
                if proc.returncode is not None:
                    break
                await asyncio.sleep(0.005)
            return proc.returncode
        if info is not None:
            return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
        await asyncio.sleep(EXIT_POLL_S)
    return proc.returncode


async def _stop_tree(proc: asyncio.subprocess.Process, token: str) -> None:
    signal_tree(token, proc.pid, signal.SIGTERM)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_exited(proc), KILL_GRACE_S)
    # SIGKILL the tree even when the leader exited: its children may have ignored SIGTERM
    signal_tree(token, proc.pid, signal.SIGKILL)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_exited(proc), KILL_GRACE_S)


async def _pump(stream: asyncio.StreamReader | None, sink: CappedOutput) -> None:
    if stream is None:
        return
    while chunk := await stream.read(READ_CHUNK):
        sink.feed(chunk)


async def _feed_stdin(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    # a child that exits without reading its stdin is normal, not an error of ours
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


async def run_process(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout_s: float,
                      cancelled: asyncio.Event | None = None, stdin: bytes | None = None,
                      head_bytes: int = 32768, tail_bytes: int = 32768,
                      discard_output: bool = False) -> ProcessOutcome:
    """Run `argv` to completion. `discard_output` sends stdout/stderr to /dev/null, for
    programs that fork a long-lived helper holding them (clipboard owners)."""
    outcome = ProcessOutcome(CappedOutput(head_bytes, tail_bytes), CappedOutput(head_bytes // 2, tail_bytes // 2))
    token = new_tree_token()
    become_subreaper()  # orphans that drop the token come back to us, to be found (process_tree)
    before = frozenset(own_children())
    spawned_at = ticks_now()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env={**env, TREE_ENV: token}, start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL if discard_output else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL if discard_output else asyncio.subprocess.PIPE)
    except OSError as exc:
        outcome.spawn_error = _spawn_error(exc, argv, cwd)
        return outcome
    remember(token, proc.pid, before, spawned_at)  # until it is known to be gone: the agent's exit sweeps it
    readers = asyncio.gather(_pump(proc.stdout, outcome.stdout), _pump(proc.stderr, outcome.stderr))
    feeder = asyncio.ensure_future(_feed_stdin(proc, stdin)) if stdin is not None else None
    waiter = asyncio.ensure_future(_exited(proc))
    stopper = asyncio.ensure_future(cancelled.wait()) if cancelled is not None else None
    exit_code: int | None = None
    try:
        watched = {waiter} | ({stopper} if stopper else set())
        done, _ = await asyncio.wait(watched, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if waiter in done:
            exit_code = waiter.result()
        else:
            outcome.cancelled = stopper in done
            outcome.timed_out = not outcome.cancelled
            await _stop_tree(proc, token)
        try:
            await asyncio.wait_for(asyncio.shield(readers), DRAIN_GRACE_S if waiter in done else KILL_GRACE_S)
        except asyncio.TimeoutError:  # something the command started still holds the pipes
            outcome.killed_stragglers = True
            signal_tree(token, proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(readers), KILL_GRACE_S)
    except asyncio.CancelledError:
        await asyncio.shield(_stop_tree(proc, token))
        raise
    finally:
        for task in (stopper, feeder, waiter):
            if task is not None and not task.done():
                task.cancel()
        if not readers.done():
            readers.cancel()
        with contextlib.suppress(BaseException):
            await readers
        if not tree_members(token):
            forget(token)
        reap_adopted()
    outcome.exit_code = proc.returncode if proc.returncode is not None else exit_code
    return outcome
