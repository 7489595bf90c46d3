"""How many TCP connections a process holds open to a port (Linux /proc), for benchmarks
that watch a client's connections to the fake llama-server."""

from __future__ import annotations

import os
from pathlib import Path


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(fd_dir / fd)
        except OSError:
            continue  # closed while we looked
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def open_connections(pid: int, remote_port: int) -> int:
    """TCP sockets process `pid` holds open to `remote_port`, in any state: one the peer has
    closed (CLOSE_WAIT) still holds the process's descriptor, and its pool slot, until closed."""
    inodes = _socket_inodes(pid)
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote, inode = fields[2], fields[9]
            if inode in inodes and int(remote.rsplit(":", 1)[1], 16) == remote_port:
                count += 1
    return count
