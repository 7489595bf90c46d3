"""Run a read-only git command with the filtered environment and every repository-chosen
program switched off (see `git_neutralise` for the exact list and how each is disabled).

`git_environment` lists the repository's config once per tool call and builds the
environment; `run_git` runs each command of the call with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import attrs

from ..shell.exec_config import ExecConfig, tool_environment
from ..shell.process_runner import run_process
from .git_neutralise import LIST_ARGV, listed_keys, neutral_environment, overrides_for

GIT_TIMEOUT_S = 60.0
GIT_OUTPUT_CAP = 2 * 1024 * 1024
LIST_CAP = 4 * 1024 * 1024


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


async def git_environment(cwd: Path, config: ExecConfig, cancelled: asyncio.Event | None = None) -> dict[str, str]:
    """The environment every git command of one tool call runs with (the config listed once)."""
    base = neutral_environment(tool_environment(config), overrides_for(()))
    out = await run_process(LIST_ARGV, cwd=cwd, env=base, timeout_s=GIT_TIMEOUT_S, cancelled=cancelled,
                            head_bytes=LIST_CAP, tail_bytes=0)
    if out.spawn_error:
        raise GitError("git is not installed or not on PATH" if "not found" in out.spawn_error else out.spawn_error)
    if out.cancelled:
        raise GitError("cancelled")
    if out.stdout.truncated:
        raise GitError("the repository's git config is larger than 4 MiB; refusing to run git on it")
    # exit status 1 means "no config at all"; anything the listing could not read fails the real command too
    return neutral_environment(tool_environment(config), overrides_for(listed_keys(out.stdout.text())))


async def run_git(args: Sequence[str], cwd: Path, config: ExecConfig,
                  cancelled: asyncio.Event | None = None, env: dict[str, str] | None = None) -> GitOutput:
    if env is None:
        env = await git_environment(cwd, config, cancelled)
    argv = ("git", "--no-pager", *args)
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
