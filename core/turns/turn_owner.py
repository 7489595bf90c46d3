"""Which process owns which turns: a lock file per live runtime under `<state>/turn-owners/`.

A runtime holds an exclusive flock on its own file for as long as it lives; the kernel
drops the lock when the process dies however it dies, so recovery can tell a dead
owner's turns (safe to interrupt or resume) from those of a process that is still
working on them (a `run` beside a long-running `serve` must not touch serve's turns).
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, every other owner counts as dead
    fcntl = None  # type: ignore[assignment]

OWNERS_DIR = "turn-owners"


class OwnerLease:
    def __init__(self, state_dir: Path, owner: str | None = None, owners_dir: str = OWNERS_DIR) -> None:
        """`owners_dir` (under `state_dir`) keeps another kind of owner apart (the task runners)."""
        self.owner = owner or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._dir = state_dir / owners_dir
        self._dir.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(self._dir / f"{self.owner}.lock", "w")
        if fcntl is not None:
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def is_alive(self, owner: str | None) -> bool:
        """True for this runtime and for any other owner whose lock is still held."""
        if owner == self.owner:
            return self._file is not None
        return owner_alive(self._dir, owner)

    def release(self) -> None:
        """Give up ownership (shutdown; tests use it to play a process that died)."""
        if self._file is not None:
            self._file.close()
            self._file = None
            try:
                (self._dir / f"{self.owner}.lock").unlink()
            except OSError:
                pass


def owner_alive(owners_dir: Path, owner: str | None) -> bool:
    """Whether some process holds `owner`'s lock in `owners_dir` now (read-only: nothing is
    created, so `status` can ask without being an owner itself)."""
    if owner is None or fcntl is None:
        return False
    try:
        probe = open(owners_dir / f"{owner}.lock", "r+")
    except OSError:
        return False
    with probe:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
    return False
