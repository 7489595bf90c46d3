"""Run a read-only git command with the filtered environment and safe overrides.

A repository's own config can name programs git runs on a plain `status` or `diff`
(core.fsmonitor, an external diff driver, a textconv filter, a pager). A read-only tool
must not execute a repo's choice of program, so those are switched off on every call;
optional locks are off so `status` never writes `.git/index.lock`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..shell.exec_config import ExecConfig, tool_environment
from ..shell.process_runner import run_process

GIT_TIMEOUT_S = 60.0
GIT_OUTPUT_CAP = 2 * 1024 * 1024
_SAFE_CONFIG = ("-c", "core.fsmonitor=false", "-c", "core.pager=cat", "-c", "color.ui=false",
                "-c", "diff.external=", "-c", "core.quotePath=false")
_GIT_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat"}


class GitError(Exception):
    """A git failure phrased for the model: what went wrong and what to try."""


@attrs.frozen
class GitOutput:
    text: str
    truncated: bool
    total_bytes: int


def _explain(stderr: str, cwd: Path, argv: Sequence[str]) -> str:
    low = stderr.lower()
    if "not a git repository" in low:
        return (f"{cwd} is not inside a git repository; pass `path` pointing into a repository "
                "(or run os.fs.locate_project to find it)")
    if "dubious ownership" in low:
        return f"git refuses {cwd}: the repository is owned by another user (safe.directory); {stderr.strip()}"
    if "unknown revision" in low or "bad revision" in low or "ambiguous argument" in low:
        return f"git does not know that revision or path: {stderr.strip()}"
    return f"git {' '.join(argv)} failed: {stderr.strip() or 'no message'}"


async def run_git(args: Sequence[str], cwd: Path, config: ExecConfig,
                  cancelled: asyncio.Event | None = None) -> GitOutput:
    env = tool_environment(config)
    env.update(_GIT_ENV)
    argv = ("git", "--no-pager", *_SAFE_CONFIG, *args)
    out = await run_process(argv, cwd=cwd, env=env, timeout_s=GIT_TIMEOUT_S, cancelled=cancelled,
                            head_bytes=GIT_OUTPUT_CAP, tail_bytes=0)
    if out.spawn_error:
        raise GitError("git is not installed or not on PATH" if "not found" in out.spawn_error else out.spawn_error)
    if out.cancelled:
        raise GitError("cancelled")
    if out.timed_out:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g}s and was stopped")
    if out.exit_code != 0:
        raise GitError(_explain(out.stderr.text(), cwd, args))
    return GitOutput(out.stdout.text(), out.stdout.truncated, out.stdout.total)
