"""The bubblewrap command line that boxes one program.

Mount order matters (a later mount covers an earlier one):
1. the whole file system read-only, a fresh /dev and /proc, a private /tmp (empty, gone
   when the program ends) and an empty /run: a read-only mount does not stop a connect() to
   a Unix socket, and /run holds the powerful ones (docker.sock, the system and session
   D-Bus); with the network allowed, a resolver file there is bound back read-only;
2. each state dir covered by an empty tmpfs (config.json, sessions, memory, `.env`,
   `serve/`: nothing of the runtime's own is readable);
3. the workspace bound read-write;
4. each hidden secret path covered again (a directory by an empty read-only tmpfs, a file by
   /dev/null), so a secret inside the workspace stays unreadable too;
5. /run and the state dir covers made read-only (only now, so a workspace inside a state
   dir, such as a session's worktree, got its mount point).
The program keeps no capabilities (root in the box cannot remount anything writable), gets
its own PID and IPC namespaces and, without `network`, a network namespace holding only an
unconfigured loopback: no host, not even the host's loopback, is reachable. A workspace
reached through a symlink is bound at its real path; the link itself, in the read-only
root, still leads there.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

RUN_DIR = "/run"  # its sockets (docker, D-Bus, the user's session bus) would connect even read-only
RESOLV_CONF = "/etc/resolv.conf"
TMP_DIR = "/tmp"
BASE_FLAGS = ("--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL",
              "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", TMP_DIR)


def _cover(path: str) -> list[str]:
    if os.path.isdir(path):  # empty and read-only: a write there fails as it does elsewhere
        return ["--tmpfs", path, "--remount-ro", path]
    return ["--ro-bind", "/dev/null", path]


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def bwrap_argv(bwrap: str, argv: Sequence[str], *, workspace: Path, cwd: Path, network: bool,
               state_dirs: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """The full command line: `bwrap` flags, then `--`, then `argv` unchanged."""
    line = [bwrap, *BASE_FLAGS]
    if not network:
        line.append("--unshare-net")
    line += ["--tmpfs", RUN_DIR]
    resolver = os.path.realpath(RESOLV_CONF)
    if network and _within(resolver, RUN_DIR) and os.path.isfile(resolver):  # a resolver stub lives there
        line += ["--ro-bind", resolver, resolver]
    covered = [d for d in dict.fromkeys(os.path.realpath(d) for d in state_dirs) if os.path.isdir(d)]
    for state_dir in covered:
        line += ["--tmpfs", state_dir]
    real_workspace = os.path.realpath(workspace)
    line += ["--bind", real_workspace, real_workspace]
    for path in dict.fromkeys(os.path.realpath(p) for p in hidden):
        # under /tmp, /run or a state dir it is gone already (unless the workspace inside brought it back)
        gone = (TMP_DIR, RUN_DIR, *covered)
        if os.path.lexists(path) and (_within(path, real_workspace) or not any(_within(path, d) for d in gone)):
            line += _cover(path)
    for folder in (RUN_DIR, *covered):  # read-only only now: a workspace inside needed its mount point
        line += ["--remount-ro", folder]
    line += ["--chdir", os.path.realpath(cwd), "--", *argv]
    return line
