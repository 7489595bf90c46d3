"""Run a vendor CLI once: the prompt on stdin, stdout lines as they come, a clean stop.

- The prompt always travels on stdin, never on argv (a full prompt would hit E2BIG).
- A CLI that rejects the request exits without draining stdin; the write then fails
  with a broken pipe. That is expected: it is absorbed, `input_truncated` is set, and the
  child's own exit code and stderr tell what went wrong. Any other stdin error travels.
- Stopping sends SIGTERM to the child's process group, and SIGKILL if it is still there
  after the grace period. The SIGKILL is only called off once the child has exited, so
  a child that traps SIGTERM is never left behind.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable, Mapping, Sequence

import attrs

CHUNK = 64 * 1024
DRAIN_AFTER_EXIT_S = 5.0
FORBIDDEN_FLAGS = ("--bare",)  # it makes claude skip OAuth and the keychain: the sign-in we rely on


class ForbiddenFlagError(ValueError):
    """A command line carries a flag that would defeat the subscription's own sign-in."""


@attrs.frozen
class CommandResult:
    exit_code: int | None
    stdout: str
    stderr: str
    input_truncated: bool = False  # the child stopped reading before the whole prompt went in
    bytes_written: int = 0
    bytes_total: int = 0
    timed_out: bool = False


def check_argv(argv: Sequence[str]) -> None:
    for flag in FORBIDDEN_FLAGS:
        if flag in argv:
            raise ForbiddenFlagError(f"refusing to run {argv[0]} with {flag}: it would bypass the CLI's own sign-in")


def _signal_group(proc: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, sig)  # the child leads its own session: this reaches its helpers too
    except ProcessLookupError:
        pass
    except PermissionError:
        try:
            proc.send_signal(sig)
        except ProcessLookupError:
            pass


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """SIGTERM, then SIGKILL after `grace_s` unless the child exited first; always reaped."""
    _signal_group(proc, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace_s)
    except TimeoutError:
        _signal_group(proc, signal.SIGKILL)
        await proc.wait()
    except asyncio.CancelledError:
        _signal_group(proc, signal.SIGKILL)  # cancelled while waiting: never leave it running
        raise


async def _feed(stdin: asyncio.StreamWriter, data: bytes) -> tuple[int, bool]:
    """(bytes written, truncated). Broken pipes are expected; other errors propagate."""
    written = 0
    try:
        for start in range(0, len(data), CHUNK):
            stdin.write(data[start:start + CHUNK])
            await stdin.drain()
            written = min(start + CHUNK, len(data))
        stdin.close()
        await stdin.wait_closed()
    except (BrokenPipeError, ConnectionResetError):
        return written, True
    return written, False


async def _lines(stream: asyncio.StreamReader, on_line: Callable[[str], None] | None) -> str:
    parts: list[str] = []
    while True:
        raw = await stream.readline()
        if not raw:
            return "".join(parts)
        line = raw.decode("utf-8", "replace")
        parts.append(line)
        if on_line is not None:
            on_line(line.rstrip("\r\n"))


async def run_cli_command(argv: Sequence[str], stdin_data: bytes, *, cwd: str | None = None,
                          env: Mapping[str, str] | None = None, on_stdout_line: Callable[[str], None] | None = None,
                          timeout_s: float | None = None, kill_grace_s: float = 2.0) -> CommandResult:
    """Run `argv`, write `stdin_data`, collect output. `env=None` inherits this process's
    environment untouched. Cancelling the caller stops the child (see `stop_process`)."""
    check_argv(argv)
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        cwd=cwd, env=dict(env) if env is not None else None, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    feeder = asyncio.ensure_future(_feed(proc.stdin, stdin_data))
    out = asyncio.ensure_future(_lines(proc.stdout, on_stdout_line))
    err = asyncio.ensure_future(proc.stderr.read())
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
            await stop_process(proc, kill_grace_s)
        written, truncated = await feeder
        done, _ = await asyncio.wait({out, err}, timeout=DRAIN_AFTER_EXIT_S)
        stdout = out.result() if out in done else ""
        stderr = err.result().decode("utf-8", "replace") if err in done else ""
        return CommandResult(proc.returncode, stdout, stderr, truncated, written, len(stdin_data), timed_out)
    finally:
        if proc.returncode is None:
            await stop_process(proc, kill_grace_s)
        for task in (feeder, out, err):
            if not task.done():
                task.cancel()
