"""Every process a tool's command started, found and killed — including the ones that left.

A process group is not enough: `setsid cmd`, `nohup cmd &` under a new session, or a double
fork re-parented to init all escape `killpg`, and one of them could outlive the agent.
Each command's environment carries a random tree token (`ATOMIC_AGENT_PROCESS_TREE`), which
every descendant inherits whatever session or parent it ends up in; a sweep reads
`/proc/<pid>/environ` of this user's processes for it, plus the live descendants of the
command's pid (`/proc/<pid>/stat` parents) for one that cleared its environment (`env -i`).
A random token cannot match a stranger's process, and a recycled pid carries a different
environment, so a sweep never kills what the command did not start.

A child that both clears its environment and leaves its parent (`env -i setsid -f …`, a
double fork, a daemon) carries neither mark. The agent therefore makes itself the child
subreaper (PR_SET_CHILD_SUBREAPER): such an orphan is re-parented to the agent instead of
to init, so it shows up as one of the agent's own children. A sweep takes those children
that did not exist before the command started (`TreeRecord.before`), started no earlier
than the command did (/proc start time), and carry no tree token of any command — with
their descendants. The agent's own helpers (MCP servers, llama-server) either predate the
command or are not children started in its window by a tool; the one overlap — a helper
the agent itself starts in its own session during a command's window and that has no
token — is accepted as the price of not letting a daemon escape. Adopted orphans that
exit on their own are reaped here (no one else waits for them).

Trees whose members may still run after their command returned are remembered, and swept at
interpreter exit (atexit), so a background child never outlives the agent.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import secrets
import signal
import sys
import threading
from collections import deque
from pathlib import Path

import attrs

TREE_ENV = "ATOMIC_AGENT_PROCESS_TREE"
PROC = Path("/proc")
PR_SET_CHILD_SUBREAPER = 36
RECENT_TREES = 64  # trees whose adopted orphans are still reaped after the tree was forgotten


@attrs.frozen
class TreeRecord:
    """What identifies a command's orphans once they carry no token: they are the agent's
    children (adopted), absent from `before`, started no earlier than `root_start`."""

    token: str
    root_pid: int | None = None
    root_start: int | None = None  # /proc start time of the command's first process, in clock ticks
    before: frozenset[int] = frozenset()  # the agent's children when the command started


_live_trees: dict[str, TreeRecord] = {}
_recent_trees: deque[TreeRecord] = deque(maxlen=RECENT_TREES)
_lock = threading.Lock()
_registered = False
_subreaper: bool | None = None
_zombies_seen: set[tuple[int, int]] = set()  # (pid, start time) found as zombies by the last reap


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


def become_subreaper() -> bool:
    """Make this process the child subreaper (once): orphans of commands re-parent to it."""
    global _subreaper
    if _subreaper is None:
        _subreaper = False
        if sys.platform.startswith("linux"):
            with contextlib.suppress(OSError, AttributeError):
                libc = ctypes.CDLL(None, use_errno=True)
                _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def own_children() -> set[int]:
    """This process's direct children, read from each thread's `children` list (cheap: no /proc scan)."""
    found: set[int] = set()
    try:
        tasks = os.listdir(PROC / "self" / "task")
    except OSError:
        return found
    for tid in tasks:
        with contextlib.suppress(OSError, ValueError):
            found.update(int(pid) for pid in (PROC / "self" / "task" / tid / "children").read_text().split())
    return found


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, session id, start time in clock ticks) of `pid`, or None when it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) < 20:
        return None
    return fields[0].decode(), int(fields[3]), int(fields[19])


def ticks_now() -> int | None:
    """Now, in the clock ticks since boot that /proc start times count (None without /proc)."""
    try:
        uptime = float((PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return int(uptime * os.sysconf("SC_CLK_TCK"))


def start_time(pid: int) -> int | None:
    found = _stat(pid)
    return found[2] if found is not None else None


def _adopted(record: TreeRecord, children: set[int]) -> list[int]:
    """The agent's children that are orphans of this command (see the module's docstring)."""
    if record.root_start is None:
        return []
    adopted = []
    own_session = os.getsid(0)
    for pid in children - record.before:
        if pid == record.root_pid:
            continue
        found = _stat(pid)
        # a command runs in a session of its own and no descendant can rejoin ours, so a child
        # in our session is one the agent started itself (ripgrep, an MCP server)
        if found is None or found[0] in ("Z", "X") or found[1] == own_session or found[2] < record.root_start:
            continue
        try:
            environ = (PROC / str(pid) / "environ").read_bytes()
        except OSError:
            continue
        if f"{TREE_ENV}=".encode() not in environ:  # a token means it belongs to whichever tree that names
            adopted.append(pid)
    return adopted


def reap_adopted() -> int:
    """Collect adopted orphans of recent commands that exited (zombies no one else waits for).

    A zombie is reaped only when it was already one at the previous call: a child the agent
    started itself is collected by its own waiter (asyncio's, subprocess's) in the meantime,
    and reaping it first would steal its exit status."""
    with _lock:
        records = list(_recent_trees) + list(_live_trees.values())
    roots = {r.root_pid for r in records}
    own_session = os.getsid(0)
    reaped = 0
    seen_now: set[tuple[int, int]] = set()
    for pid in own_children() - roots:
        found = _stat(pid)
        if found is None or found[0] != "Z" or found[1] == own_session:
            continue
        if not any(r.root_start is not None and found[2] >= r.root_start and pid not in r.before for r in records):
            continue
        if (pid, found[2]) not in _zombies_seen:
            seen_now.add((pid, found[2]))
            continue
        with contextlib.suppress(ChildProcessError, OSError):
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG) is not None:
                reaped += 1
    _zombies_seen.clear()
    _zombies_seen.update(seen_now)
    return reaped


def _carries(pid: int, needle: bytes) -> bool:
    try:
        return needle in (PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or another user's process: never ours to kill
        return False


def tree_members(token: str, root_pid: int | None = None) -> list[int]:
    """The live processes of the tree `token` (and the descendants of `root_pid`, and its
    orphans adopted by this process with theirs), never this one."""
    parents = _processes()
    needle = f"{TREE_ENV}={token}".encode()
    members = {pid for pid in parents if _carries(pid, needle)}
    with _lock:
        record = _live_trees.get(token)
    adopted = _adopted(record, {pid for pid, parent in parents.items() if parent == os.getpid()}) \
        if record is not None else []
    members.update(adopted)
    if root_pid is not None or adopted:
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        stack = ([root_pid] if root_pid is not None else []) + adopted
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in members:
                    members.add(child)
                    stack.append(child)
        if root_pid is not None and root_pid in parents:
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


def remember(token: str, root_pid: int | None = None, before: frozenset[int] = frozenset(),
             spawned_at: int | None = None) -> None:
    """The tree may outlive its command: sweep it at exit unless `forget` says it is gone.
    `root_pid`, `before` (the agent's children just before the spawn) and `spawned_at`
    (ticks_now() then) let a sweep find orphans that dropped the token (see the module's
    docstring). A command that exits at once may be reaped before its start time is read:
    then the spawn time stands in, a second early (uptime is read to 1/100 s, and a coarse
    clock must not make the command's own children look older than it)."""
    global _registered
    root_start = start_time(root_pid) if root_pid is not None else None
    if root_start is None and spawned_at is not None:
        root_start = max(spawned_at - os.sysconf("SC_CLK_TCK"), 0)
    record = TreeRecord(token, root_pid, root_start, before)
    with _lock:
        _live_trees[token] = record
        if not _registered:
            atexit.register(sweep_remembered)
            _registered = True


def forget(token: str) -> None:
    with _lock:
        record = _live_trees.pop(token, None)
        if record is not None:
            _recent_trees.append(record)


def sweep_remembered() -> int:
    """SIGKILL every member of every remembered tree (agent exit); how many were killed."""
    with _lock:
        tokens = list(_live_trees)
    killed = sum(len(signal_tree(token, None, signal.SIGKILL)) for token in tokens)
    with _lock:
        for token in tokens:
            _live_trees.pop(token, None)
    return killed
