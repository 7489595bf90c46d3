"""Resolve a skill's script inside its directory and run it: own process group, filtered
environment, timeout, cancellation and an output cap.

A script is named relative to its skill directory. The name is refused when it leaves the
directory (`..`, an absolute path, or a symlink whose target is outside), when the skill
declares `scripts` and this is not one of them, or when it is not a regular file. How it
runs follows its suffix: `.py` with this Python, `.sh` with /bin/sh, anything else must be
executable and is run directly (its shebang decides).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from .skill_manifest import SkillManifest, script_path_problem

MAX_SCRIPT_BYTES = 1 << 20
KILL_GRACE_S = 2.0


class ScriptRefused(ValueError):
    """The script cannot be run as asked; the message says why and what to do."""


@attrs.frozen
class ResolvedScript:
    path: Path  # canonical, inside the skill directory
    relative: str
    digest: str  # sha256 of the content that was approved
    argv_prefix: tuple[str, ...]


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def resolve_script(skill: SkillManifest, script: str) -> ResolvedScript:
    problem = script_path_problem(script)
    if problem:
        raise ScriptRefused(f"script {script!r}: {problem}")
    relative = "/".join(p for p in script.replace("\\", "/").split("/") if p not in ("", "."))
    if skill.scripts and relative not in skill.scripts:
        raise ScriptRefused(f"skill {skill.name!r} declares the scripts {list(skill.scripts)}; {script!r} is not one "
                            "of them")
    base = Path(os.path.realpath(skill.directory))
    real = Path(os.path.realpath(base / relative))
    if real != base and base not in real.parents:
        raise ScriptRefused(f"script {script!r} resolves to {real}, outside the skill directory {base}; refused")
    if not real.is_file():
        raise ScriptRefused(f"script {script!r} is not a file in skill {skill.name!r}")
    if real.stat().st_size > MAX_SCRIPT_BYTES:
        raise ScriptRefused(f"script {script!r} is over {MAX_SCRIPT_BYTES} bytes; refused")
    if real.suffix == ".py":
        prefix: tuple[str, ...] = (sys.executable,)
    elif real.suffix == ".sh":
        prefix = ("/bin/sh",)
    elif os.access(real, os.X_OK):
        prefix = ()
    else:
        raise ScriptRefused(f"script {script!r} is neither .py nor .sh and not executable; make it executable "
                            "(with a shebang line) or give it one of those suffixes")
    return ResolvedScript(real, relative, file_digest(real), prefix)


def script_environment(skill: SkillManifest, environ: Mapping[str, str]) -> dict[str, str]:
    """The filtered child environment plus exactly the variables the skill declares; a
    declared variable that is unset is an error naming where to put it."""
    from atomic_agent.api import child_environment

    missing = [name for name in skill.env if not environ.get(name)]
    if missing:
        raise ScriptRefused(f"skill {skill.name!r} needs the environment variable(s) {', '.join(missing)}, which are "
                            "not set; the user can add them to <state dir>/.env (KEY=value) or export them")
    return child_environment(extra_allowed=skill.env, environ=environ)


@attrs.frozen
class ScriptOutcome:
    exit_code: int | None
    output: str
    timed_out: bool = False
    cancelled: bool = False
    cut: int = 0  # characters of output left out


def _kill_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


async def run_script(argv: Sequence[str], cwd: Path, env: Mapping[str, str], timeout_s: float,
                     max_output_chars: int, cancelled: asyncio.Event) -> ScriptOutcome:
    proc = await asyncio.create_subprocess_exec(*argv, cwd=str(cwd), env=dict(env), stdin=asyncio.subprocess.DEVNULL,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                start_new_session=True)
    communicate = asyncio.ensure_future(proc.communicate())
    stop = asyncio.ensure_future(cancelled.wait())
    try:
        done, _ = await asyncio.wait({communicate, stop}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # the turn's own task was cancelled: the script must not outlive it
        _kill_group(proc, signal.SIGKILL)
        communicate.cancel()
        await asyncio.gather(communicate, return_exceptions=True)
        raise
    finally:
        stop.cancel()
    timed_out, was_cancelled = communicate not in done and stop not in done, stop in done and communicate not in done
    if communicate not in done:
        _kill_group(proc, signal.SIGTERM)
        try:
            await asyncio.wait_for(asyncio.shield(communicate), KILL_GRACE_S)
        except asyncio.TimeoutError:
            _kill_group(proc, signal.SIGKILL)
    raw, _ = await communicate
    text = (raw or b"").decode("utf-8", errors="replace")
    cut = max(0, len(text) - max_output_chars)
    if cut:  # keep the head and the tail: the start says what ran, the end how it ended
        half = max_output_chars // 2
        text = text[:half] + f"\n…[{cut} chars cut]…\n" + text[-half:]
    return ScriptOutcome(proc.returncode, text, timed_out=timed_out, cancelled=was_cancelled, cut=cut)
