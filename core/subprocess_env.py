"""What the agent keeps from the programs it starts: its secrets, both ways a child could get them.

The runtime loads API keys and bot tokens from `<state>/.env` into its own environment.

1. Through the environment a child inherits. A subprocess started by a tool (shell, git,
   ps, a skill script) gets `child_environment`: the variables ordinary command-line
   programs need (where binaries and the home dir are, who the user is, locale, terminal
   type, temp and XDG dirs, the CA-bundle variables TLS clients need on managed networks)
   plus the names the tool or the user's config declares. API keys, tokens and proxy URLs
   with credentials are dropped unless allowed by name. The `os` plugin's `exec` config
   block holds the user's switch (`filterEnvironment`, `allowedEnvironment`).

2. Through `/proc`. A child runs as the same user and can look at its parent:
   `/proc/$PPID/environ` holds the environment the agent was launched with (API keys
   exported in the shell), and `/proc/$PPID/mem` the keys it loaded later. `protect_process`,
   called once when a runtime is created (Linux):

   - marks the process not dumpable (`prctl(PR_SET_DUMPABLE, 0)`), as ssh-agent does. The
     kernel then makes the agent's `/proc/<pid>/environ`, `mem`, `maps`, `fd` root-owned,
     refuses ptrace attach from same-user processes and writes no core dumps; the agent
     keeps full access to its own `/proc/self`, and children are unaffected (`execve`
     makes every new program dumpable again). This covers memory, not just the
     environment, which re-exec'ing without secrets would not.
   - scrubs the launch environment block itself: every variable is first re-set so the C
     library's `environ` points at heap copies (Python's `os.environ` is a copy anyway),
     then the original strings — the bytes `/proc/<pid>/environ` shows — are overwritten
     with zeros. A child running as root (which the first step cannot stop) then reads
     nothing there either. Root can still read the agent's memory: run the agent as an
     ordinary user for that boundary.

   On other systems this is a no-op and says so (`protect_process` returns False).
   Debugging the agent with ptrace-based tools (py-spy, gdb -p) needs root afterwards.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import os
import sys
from collections.abc import Iterable, Mapping

#: used when the agent itself runs without PATH (a bare `env -i` launch)
SAFE_DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

BASELINE_NAMES: tuple[str, ...] = (
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TMPDIR", "TZ",
    # TLS trust stores: not secret, and without them git/curl fail behind a corporate CA
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO",
    "NODE_EXTRA_CA_CERTS",
)
BASELINE_PATTERNS: tuple[str, ...] = ("LC_*", "XDG_*")


def _check_names(names: Iterable[str]) -> tuple[str, ...]:
    checked = []
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"an allowed environment variable must be a non-empty name or NAME_* pattern, got {name!r}")
        checked.append(name.strip())
    return tuple(checked)


def is_allowed(name: str, extra_allowed: Iterable[str] = ()) -> bool:
    """Whether `name` passes the filter: a baseline name or pattern, or one of `extra_allowed`.

    Patterns use shell-style wildcards (`AWS_*`); matching is case-sensitive, like POSIX.
    """
    if name in BASELINE_NAMES:
        return True
    patterns = (*BASELINE_PATTERNS, *extra_allowed)
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)


def child_environment(extra_allowed: Iterable[str] = (), environ: Mapping[str, str] | None = None,
                      enabled: bool = True) -> dict[str, str]:
    """The environment for a child process.

    `extra_allowed` names (or `NAME_*` patterns) the tool or the user declared on top of
    the baseline; `environ` defaults to this process's environment. With `enabled` False
    (the user switched filtering off in config) the whole environment is passed through.
    PATH is always present so a child can find `sh`, `git` and friends.
    """
    source = os.environ if environ is None else environ
    allowed = _check_names(extra_allowed)
    if not enabled:
        env = dict(source)
    else:
        env = {k: v for k, v in source.items() if is_allowed(k, allowed)}
    if not env.get("PATH"):
        env["PATH"] = SAFE_DEFAULT_PATH
    return env


# The agent's own process, out of reach through /proc.

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
