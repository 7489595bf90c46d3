"""Finding a runnable llama-server: `llama.binary` when set, else the per-machine cache."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from .cache_locations import cached_binary_path
from .llama_errors import BinaryMissingError
from .streamed_command import LineSink

StepSink = Callable[[str], None]


def binary_version(path: Path) -> str | None:
    """The first line `--version` prints (to stderr in this llama.cpp), or None when the
    file is missing, not executable, or does not run."""
    if not path.is_file() or not os.access(path, os.X_OK):
        return None
    try:
        done = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60,
                              stdin=subprocess.DEVNULL, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
    first = lines[0].strip() if lines else "unknown"
    return first.removeprefix("version:").strip() or "unknown"


def binary_runs(path: Path) -> bool:
    return binary_version(path) is not None


def resolve_binary(configured: str, cache: Path) -> Path:
    """The binary to run, without building anything; BinaryMissingError says what to do."""
    if configured:
        path = Path(configured).expanduser()
        if not binary_runs(path):
            raise BinaryMissingError(
                f"llama.binary is set to {path}, but that file does not run `--version` successfully "
                "(missing, not executable, or built for another machine). Point it at a working llama-server "
                "with `atomic-agent config set llama.binary PATH`, or set it to \"\" to use the binary "
                "`atomic-agent llama install` builds.")
        return path
    path = cached_binary_path(cache)
    if not binary_runs(path):
        raise BinaryMissingError(
            f"llama-server is not installed for this machine (looked for {path}). Run "
            "`atomic-agent llama install` to build it once (about 7 minutes on 2 cores), "
            "or set llama.binary to an existing llama-server.")
    return path


def ensure_binary(configured: str, cache: Path, *, build: Callable[..., Path] | None = None,
                  on_step: StepSink | None = None, on_line: LineSink | None = None) -> Path:
    """Like resolve_binary, but builds into the cache when it is empty. An explicit
    `llama.binary` is never built over: a broken override is an error, not a rebuild."""
    if configured:
        return resolve_binary(configured, cache)
    path = cached_binary_path(cache)
    if binary_runs(path):
        return path
    if build is None:
        from .binary_build import build_llama_server as build
    return build(path, on_step=on_step, on_line=on_line)
