"""Proof, at the system-call level, that the per-commit durability level works: a non-durable
commit writes its WAL frames without syncing, a durable one fsyncs the WAL file — the same file
holding the earlier frames, so it makes them durable too.

A SIGKILL cannot tell NORMAL from FULL (both survive a process crash), so this test watches the
syscalls with strace instead. Skipped where strace or ptrace is unavailable.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = r"""
import asyncio, os, sys
from atomic_agent.persistence.sqlite_store import SqliteStore

def mark(name):
    os.write(2, f"MARK {name}\n".encode())

async def main(path):
    store = SqliteStore.open(path)
    async with store.transaction(durable=False) as tx:  # warm up: WAL file exists, level NORMAL
        await tx.append("s", "warm")
    mark("normal-start")
    for i in range(5):
        async with store.transaction(durable=False) as tx:
            await tx.append("s", {"partial": i})
    mark("normal-end")
    async with store.transaction(durable=True) as tx:
        await tx.append("s", "acknowledged")
    mark("full-end")
    await store.close()

asyncio.run(main(sys.argv[1]))
"""


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _strace_works(), reason="strace (or ptrace) is not available here")
def test_durable_commit_fsyncs_the_wal_that_holds_earlier_partial_commits(tmp_path: Path):
    trace = tmp_path / "trace.txt"
    db = tmp_path / "store.sqlite"
    subprocess.run(["strace", "-f", "-e", "trace=openat,write,pwrite64,fsync,fdatasync", "-o", str(trace),
                    sys.executable, "-c", CHILD, str(db)], check=True, capture_output=True, timeout=120)
    wal_fds: set[str] = set()
    section = "setup"
    counts: dict[str, dict[str, int]] = {}
    for line in trace.read_text().splitlines():
        opened = re.search(r'openat\(.*"(?P<name>[^"]+)".*\)\s+=\s+(?P<fd>\d+)$', line)
        if opened and opened["name"].endswith("store.sqlite-wal"):
            wal_fds.add(opened["fd"])
        marker = re.search(r'write\(2, "MARK (?P<name>[\w-]+)\\n"', line)
        if marker:
            section = marker["name"]
            continue
        call = re.search(r"\b(?P<call>pwrite64|fsync|fdatasync)\((?P<fd>\d+)[,)]", line)
        if call and call["fd"] in wal_fds:
            kind = "write" if call["call"] == "pwrite64" else "sync"
            counts.setdefault(section, {"write": 0, "sync": 0})[kind] += 1
    assert wal_fds, "the trace never showed the WAL file being opened"
    # a marker opens the section that follows it
    normal = counts.get("normal-start", {"write": 0, "sync": 0})
    full = counts.get("normal-end", {"write": 0, "sync": 0})
    assert normal["write"] >= 5, f"the partial commits wrote no WAL frames: {counts}"
    assert normal["sync"] == 0, f"non-durable commits must not fsync: {counts}"
    assert full["sync"] >= 1, f"the durable commit did not fsync the WAL: {counts}"
