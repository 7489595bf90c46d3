"""Whether a process the test started still runs. A zombie (killed, not yet collected by its
parent or a non-reaping init) counts as gone: it runs nothing any more."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def gone_soon(pid: int, within_s: float = 10.0) -> bool:
    """The process was signalled; on a loaded machine the kernel may take a moment to end it."""
    deadline = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


async def gone_soon_async(pid: int, within_s: float = 10.0) -> bool:
    return await asyncio.to_thread(gone_soon, pid, within_s)
