"""Fetching one distribution file from the package index with pip (never installing it)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from .llama_errors import BuildError
from .streamed_command import LineSink, run_streamed


def pip_command() -> list[str]:
    """This interpreter's pip when it has one (the venv's), else a pip on PATH."""
    import importlib.util

    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    for name in ("pip3", "pip"):
        found = shutil.which(name)
        if found:
            return [found]
    raise BuildError("pip is not available to fetch packages from the package index. "
                     "Install pip into the environment atomic-agent runs from (python -m ensurepip).")


def pip_download(requirement: str, dest: Path, *, pattern: str, extra_args: Sequence[str] = (),
                 on_line: LineSink | None = None) -> Path:
    """`pip download --no-deps REQUIREMENT -d DEST`; returns the one file matching `pattern`."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [*pip_command(), "download", "--no-deps", "--disable-pip-version-check", *extra_args,
           requirement, "-d", str(dest)]
    result = run_streamed(cmd, on_line=on_line)
    if result.returncode != 0:
        tail = "\n".join(result.tail[-10:])
        raise BuildError(f"`pip download {requirement}` failed with exit code {result.returncode}. "
                         f"Check that the package index is reachable (pip config, proxy). Last output:\n{tail}")
    found = sorted(dest.glob(pattern))
    if not found:
        raise BuildError(f"`pip download {requirement}` finished but left no file matching {pattern!r} in {dest}. "
                         "The index may only offer a different file type; check `pip download` by hand.")
    return found[0]
