"""Replace a file's contents atomically: temp file in the same dir, fsync, rename.

Writes go to the canonical path the approval funnel returned. The rename replaces the
directory entry itself, so a symlink planted at that name after the check is replaced,
never followed, and a hard link to a file elsewhere is detached instead of written
through. The existing file's permission bits are kept.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class FileWriteError(OSError):
    pass


def _read_umask() -> int:
    # read once at import (os.umask is process-wide and racy to probe from tool threads)
    current = os.umask(0o022)
    os.umask(current)
    return current


_UMASK = _read_umask()


def write_file_atomic(path: Path, data: bytes, create_dirs: bool = True) -> bool:
    """Write `data` to `path`; returns True when the file was created (did not exist)."""
    parent = path.parent
    if not parent.exists():
        if not create_dirs:
            raise FileWriteError(f"{parent} does not exist; pass create_dirs=true to create it")
        parent.mkdir(parents=True, exist_ok=True)
    mode = None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise FileWriteError(f"{path} is a directory")
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
            raise FileWriteError(f"{path} is not a regular file (device, FIFO or socket); refusing to write")
        mode = stat.S_IMODE(st.st_mode)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return st is None
