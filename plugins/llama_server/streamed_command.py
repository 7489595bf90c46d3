"""Running an installer step (pip, cmake) while handing each output line to a callback."""

from __future__ import annotations

import collections
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import attrs

LineSink = Callable[[str], None]


@attrs.frozen
class StreamedResult:
    returncode: int
    tail: tuple[str, ...]  # the last lines of output, for error messages


def run_streamed(cmd: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
                 on_line: LineSink | None = None, tail_lines: int = 30) -> StreamedResult:
    """Run `cmd` with stdout+stderr merged; every line goes to `on_line` as it arrives.

    A missing executable is reported as return code 127 with the OS error as the tail.
    Ctrl-C terminates the child before re-raising, so no compiler keeps running unseen.
    """
    tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
    try:
        proc = subprocess.Popen(list(cmd), cwd=cwd, env=dict(env) if env is not None else None,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                text=True, errors="replace", bufsize=1)
    except OSError as exc:
        return StreamedResult(127, (f"{cmd[0]}: {exc.strerror or exc}",))
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = raw.rstrip("\n")
            tail.append(line)
            if on_line is not None:
                on_line(line)
        returncode = proc.wait()
    except BaseException:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise
    return StreamedResult(returncode, tuple(tail))
