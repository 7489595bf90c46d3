"""Keep the agent's own process out of reach of the programs it starts.

A tool's child gets a filtered environment (see `child_environment`), but a child runs
as the same user and can look at its parent through `/proc`: `/proc/$PPID/environ` holds
the environment the agent was launched with (API keys exported in the shell), and
`/proc/$PPID/mem` the keys it loaded later. Scrubbing only the environ block would leave
the heap readable, and re-exec'ing without secrets would double start-up time, so the
runtime does what ssh-agent does: it marks itself not dumpable
(`prctl(PR_SET_DUMPABLE, 0)`). The kernel then makes the agent's `/proc/<pid>/environ`,
`mem`, `maps`, `fd` and friends root-owned, refuses ptrace attach from same-user
processes and writes no core dumps; the agent itself keeps full access to its own
`/proc/self`. Children are unaffected: `execve` makes every new program dumpable again.

Linux only; on other systems this is a no-op and says so (`protect_process` returns False).
Debugging the agent with ptrace-based tools (py-spy, gdb -p) then needs root.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3

_done = False


def _prctl() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    return getattr(libc, "prctl", None)


def protect_process() -> bool:
    """Mark this process not dumpable (once); True when the kernel took it."""
    global _done
    if _done:
        return True
    prctl = _prctl()
    if prctl is None:
        return False
    if prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:  # type: ignore[operator]
        return False
    _done = True
    return True


def is_protected() -> bool:
    """Whether this process is currently not dumpable (what a child would run into)."""
    prctl = _prctl()
    return prctl is not None and prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0  # type: ignore[operator]
