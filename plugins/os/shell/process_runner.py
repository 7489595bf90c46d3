"""Run one child process with a timeout, output caps and whole-group cancellation.

The child starts in its own session, so a timeout or a cancelled turn kills everything
it spawned (a `make` and its compilers, a pipeline), not just the first process. The
shell, git, proc and desktop tools all start their children through here.
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

KILL_GRACE_S = 2.0  # SIGTERM first; SIGKILL when the group is still there after this
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


def _signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _stop_group(proc: asyncio.subprocess.Process) -> None:
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), KILL_GRACE_S)
    except asyncio.TimeoutError:
        pass
    # SIGKILL the group even when the leader exited: its children may have ignored SIGTERM
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


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
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=str(cwd), env=dict(env), start_new_session=True,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL if discard_output else asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL if discard_output else asyncio.subprocess.PIPE)
    except OSError as exc:
        outcome.spawn_error = _spawn_error(exc, argv, cwd)
        return outcome
    readers = asyncio.gather(_pump(proc.stdout, outcome.stdout), _pump(proc.stderr, outcome.stderr))
    feeder = asyncio.ensure_future(_feed_stdin(proc, stdin)) if stdin is not None else None
    waiter = asyncio.ensure_future(proc.wait())
    stopper = asyncio.ensure_future(cancelled.wait()) if cancelled is not None else None
    try:
        watched = {waiter} | ({stopper} if stopper else set())
        done, _ = await asyncio.wait(watched, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if waiter not in done:
            outcome.cancelled = stopper in done
            outcome.timed_out = not outcome.cancelled
            await _stop_group(proc)
        try:
            await asyncio.wait_for(asyncio.shield(readers), KILL_GRACE_S)
        except asyncio.TimeoutError:
            outcome.killed_stragglers = True
            _signal_group(proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(readers), KILL_GRACE_S)
    except asyncio.CancelledError:
        await asyncio.shield(_stop_group(proc))
        raise
    finally:
        for task in (stopper, feeder):
            if task is not None and not task.done():
                task.cancel()
        if not readers.done():
            readers.cancel()
        with contextlib.suppress(BaseException):
            await readers
    outcome.exit_code = proc.returncode
    return outcome
