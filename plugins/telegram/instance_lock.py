"""`<state>/telegram.lock`: one polling runtime per state dir (Telegram answers a second
poller with 409 Conflict; this fails fast instead, with `lock_held`).

An exclusive flock held for as long as the channel is up; the kernel drops it when the
process dies, so a kill -9 never leaves a stale lock. The file names the holder's pid for
`telegram status`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any

LOCK_FILE = "telegram.lock"
LOCK_HELD = "lock_held"


class LockHeldError(RuntimeError):
    """Another runtime already polls this bot from the same state dir."""

    reason = LOCK_HELD


def lock_path(state_dir: Path) -> Path:
    return state_dir / LOCK_FILE


class InstanceLock:
    standby = False  # another holder means: fail with lock_held (one poller per state dir)

    def __init__(self, state_dir: Path) -> None:
        self.path = lock_path(state_dir)
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._file is not None

    def still_held(self) -> bool:
        return self.held  # the kernel holds an flock for as long as the process lives

    def holder(self) -> dict[str, Any] | None:
        pid = holder_pid(self.path.parent)
        return None if pid is None else {"pid": pid}

    def acquire(self) -> None:
        import fcntl

        if self._file is not None:
            return
        handle = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            holder = holder_pid(self.path.parent)
            raise LockHeldError(f"{LOCK_HELD}: another atomic-agent process"
                                f"{f' (pid {holder})' if holder else ''} runs the Telegram channel "
                                f"of this state dir") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._file = handle

    def release(self) -> None:
        import fcntl

        if self._file is None:
            return
        try:
            self._file.seek(0)
            self._file.truncate()
            fcntl.flock(self._file, fcntl.LOCK_UN)
        finally:
            self._file.close()
            self._file = None


def holder_pid(state_dir: Path) -> int | None:
    """The pid of the process holding the lock now, or None (free, or no lock file)."""
    import fcntl

    path = lock_path(state_dir)
    try:
        probe = open(path, encoding="utf-8")
    except OSError:
        return None
    with probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = probe.read().strip()
            return int(text) if text.isdigit() else -1
        fcntl.flock(probe, fcntl.LOCK_UN)
        return None
