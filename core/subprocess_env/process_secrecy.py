"""Keep the agent's own process out of reach of the programs it starts.

A tool's child gets a filtered environment (see `child_environment`), but a child runs
as the same user and can look at its parent through `/proc`: `/proc/$PPID/environ` holds
the environment the agent was launched with (API keys exported in the shell), and
`/proc/$PPID/mem` the keys it loaded later. The choice, made once when a runtime is
created (Linux):

1. Mark the process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), as ssh-agent does. The
   kernel then makes the agent's `/proc/<pid>/environ`, `mem`, `maps`, `fd` root-owned,
   refuses ptrace attach from same-user processes and writes no core dumps; the agent
   keeps full access to its own `/proc/self`, and children are unaffected (`execve`
   makes every new program dumpable again). This covers memory, not just the
   environment, which re-exec'ing without secrets would not.
2. Scrub the launch environment block itself: every variable is first re-set so the C
   library's `environ` points at heap copies (Python's `os.environ` is a copy anyway),
   then the original strings — the bytes `/proc/<pid>/environ` shows — are overwritten
   with zeros. A child running as root (which step 1 cannot stop) then reads nothing
   there either. Root can still read the agent's memory: run the agent as an ordinary
   user for that boundary.

On other systems this is a no-op and says so (`protect_process` returns False).
Debugging the agent with ptrace-based tools (py-spy, gdb -p) needs root afterwards.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
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


def _environ_block() -> tuple[int, int] | None:
    """(start, end) addresses of the launch environment strings (fields 50-51 of /proc/self/stat)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2:].split()  # field 3 onward
    try:
        start, end = int(fields[50 - 3]), int(fields[51 - 3])
    except (IndexError, ValueError):
        return None
    return (start, end) if 0 < start < end else None


def scrub_environ_block() -> bool:
    """Zero the launch environment strings after moving libc's `environ` onto copies."""
    block = _environ_block()
    if block is None:
        return False
    for key, value in list(os.environ.items()):
        try:
            os.putenv(key, value)  # setenv() copies: environ[i] now points into the heap
        except (OSError, ValueError):
            return False
    start, end = block
    ctypes.memset(start, 0, end - start)
    return True


def protect_process() -> bool:
    """Mark this process not dumpable and scrub its environ block (once); True when done."""
    global _done
    if _done:
        return True
    prctl = _prctl()
    if prctl is None:
        return False
    if prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:  # type: ignore[operator]
        return False
    scrub_environ_block()
    _done = True
    return True


def is_protected() -> bool:
    """Whether this process is currently not dumpable (what a child would run into)."""
    prctl = _prctl()
    return prctl is not None and prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0  # type: ignore[operator]
