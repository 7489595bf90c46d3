"""Whether bubblewrap can box a program on this machine, and what to do when it cannot."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess

from .bwrap_command import BASE_FLAGS

PROBE_TIMEOUT_S = 10.0
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`) or point sandbox.bwrapPath "
                "at the bwrap binary")
USERNS_HINT = ("bubblewrap needs unprivileged user namespaces: enable them with `sudo sysctl -w "
               "kernel.unprivileged_userns_clone=1` (Debian) and, where AppArmor restricts them (Ubuntu 24.04+), "
               "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for bwrap; "
               "inside a container, run it with user namespaces allowed")


def resolve_bwrap(configured: str) -> str | None:
    """The bwrap executable `configured` names (a path, or a name on PATH), or None."""
    if os.sep in configured:
        return configured if os.path.isfile(configured) and os.access(configured, os.X_OK) else None
    return shutil.which(configured)


def _trial(binary: str) -> list[str]:
    return [binary, *BASE_FLAGS, "--unshare-net", "--", "true"]


def _verdict(binary: str, returncode: int | None, stderr: bytes) -> str | None:
    if returncode == 0:
        return None
    detail = stderr.decode("utf-8", "replace").strip()[:300] or f"exit {returncode}"
    lowered = detail.lower()
    if "namespace" in lowered or "operation not permitted" in lowered or "permission denied" in lowered:
        return f"the sandbox cannot run: {binary} could not create its namespaces ({detail}); {USERNS_HINT}"
    return f"the sandbox cannot run: {binary} failed a trial run ({detail}); {INSTALL_HINT}"


def _missing(configured: str) -> str:
    return f"the sandbox cannot run: bubblewrap was not found at sandbox.bwrapPath {configured!r}; {INSTALL_HINT}"


def _failed_start(binary: str, exc: BaseException) -> str:
    return f"the sandbox cannot run: {binary} failed to start ({type(exc).__name__}: {exc}); {INSTALL_HINT}"


async def bwrap_problem(configured: str) -> str | None:
    """None when `configured` boxes a trivial program (no network, read-only root); else the
    reason and the fix, in words a person can act on."""
    binary = resolve_bwrap(configured)
    if binary is None:
        return _missing(configured)
    try:
        proc = await asyncio.create_subprocess_exec(*_trial(binary), stdin=asyncio.subprocess.DEVNULL,
                                                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), PROBE_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError) as exc:
        return _failed_start(binary, exc)
    return _verdict(binary, proc.returncode, err)


def bwrap_problem_now(configured: str) -> str | None:
    """`bwrap_problem` for a caller outside an event loop (`doctor`)."""
    binary = resolve_bwrap(configured)
    if binary is None:
        return _missing(configured)
    try:
        done = subprocess.run(_trial(binary), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return _failed_start(binary, exc)
    return _verdict(binary, done.returncode, done.stderr)
