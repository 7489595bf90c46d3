"""Every process a tool's command started, found and killed — including the ones that left.

A process group is not enough: `setsid cmd`, `nohup cmd &` under a new session, or a double
fork re-parented to init all escape `killpg`, and one of them could outlive the agent.
Each command's environment carries a random tree token (`ATOMIC_AGENT_PROCESS_TREE`), which
every descendant inherits whatever session or parent it ends up in; a sweep reads
`/proc/<pid>/environ` of this user's processes for it, plus the live descendants of the
command's pid (`/proc/<pid>/stat` parents) for one that cleared its environment (`env -i`).
A random token cannot match a stranger's process, and a recycled pid carries a different
environment, so a sweep never kills what the command did not start.

Trees whose members may still run after their command returned are remembered, and swept at
interpreter exit (atexit), so a background child never outlives the agent.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import threading
from pathlib import Path

TREE_ENV = "ATOMIC_AGENT_PROCESS_TREE"
PROC = Path("/proc")

_live_trees: set[str] = set()
_lock = threading.Lock()
_registered = False


def new_tree_token() -> str:
    return secrets.token_hex(12)


def _processes() -> dict[int, int]:
    """pid -> parent pid of every process we can see (empty without /proc)."""
    parents: dict[int, int] = {}
    try:
        entries = os.listdir(PROC)
    except OSError:
        return parents
    for name in entries:
        if not name.isdigit():
            continue
        try:
            stat = (PROC / name / "stat").read_bytes()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so split after the last ")"
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":  # a zombie holds nothing and cannot be killed
            parents[int(name)] = int(fields[1])
    return parents


def _carries(pid: int, needle: bytes) -> bool:
    try:
        return needle in (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or another user's process: never ours to kill
        return False


def tree_members(token: str, root_pid: int | None = None) -> list[int]:
    """The live processes of the tree `token` (and the descendants of `root_pid`), never this one."""
    parents = _processes()
    needle = f"{TREE_ENV}={token}".encode()
    members = {pid for pid in parents if _carries(pid, needle)}
    if root_pid is not None:
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        stack = [root_pid]
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in members:
                    members.add(child)
                    stack.append(child)
        if root_pid in parents:
            members.add(root_pid)
    members.discard(os.getpid())
    return sorted(members)


def signal_tree(token: str, root_pid: int | None, sig: int) -> list[int]:
    """Send `sig` to the command's process group and to every member of its tree; the pids hit."""
    if root_pid is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(root_pid, sig)
    hit = []
    for pid in tree_members(token, root_pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            hit.append(pid)
    return hit


def remember(token: str) -> None:
    """The tree may outlive its command: sweep it at exit unless `forget` says it is gone."""
    global _registered
    with _lock:
        _live_trees.add(token)
        if not _registered:
            atexit.register(sweep_remembered)
            _registered = True


def forget(token: str) -> None:
    with _lock:
        _live_trees.discard(token)


def sweep_remembered() -> int:
    """SIGKILL every member of every remembered tree (agent exit); how many were killed."""
    with _lock:
        tokens = list(_live_trees)
        _live_trees.clear()
    return sum(len(signal_tree(token, None, signal.SIGKILL)) for token in tokens)
