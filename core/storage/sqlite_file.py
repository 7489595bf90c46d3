"""Opening a SQLite state file: one connection in autocommit mode (transactions are
explicit, see sqlite_transaction), WAL, and a durability mode chosen per file.

`FULL` fsyncs every commit: for what was acknowledged to someone (accepted messages, the
turn ledger). `NORMAL` keeps every commit atomic in WAL but skips the per-commit fsync: for
re-derivable state (memory notes and facts) where throughput matters more than the last
second before a power cut.
"""

from __future__ import annotations

import enum
import sqlite3
from collections.abc import Callable
from pathlib import Path


class Durability(enum.Enum):
    FULL = "FULL"
    NORMAL = "NORMAL"


def open_sqlite(path: Path, durability: Durability, *, busy_timeout_s: float = 5.0, foreign_keys: bool = False,
                inspect: Callable[[sqlite3.Connection], None] | None = None) -> sqlite3.Connection:
    """Connect (creating the file) and set WAL and `durability`.

    `inspect(conn)` runs first, before anything is written, so a file it refuses (by
    raising) is left untouched. Any failure closes the connection and propagates; a file
    that is not a usable database raises sqlite3.DatabaseError."""
    conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    try:
        if inspect is not None:
            inspect(conn)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={durability.value}")
        # the stores' triggers were written for sqlite-utils' connections, which turn this on
        # (a REPLACE fires the delete triggers); kept on now that they open without it
        conn.execute("PRAGMA recursive_triggers=on")
        if foreign_keys:
            conn.execute("PRAGMA foreign_keys=ON")
    except BaseException:
        conn.close()
        raise
    return conn


def open_sqlite_read_only(path: Path, *, busy_timeout_s: float = 2.0, immutable: bool = False) -> sqlite3.Connection:
    """Open an existing file without the right to write (or create) it: for inspection.
    `immutable` reads it as it lies on disk, without the -wal/-shm files a read-only
    directory would not let SQLite create."""
    flags = "mode=ro&immutable=1" if immutable else "mode=ro"
    return sqlite3.connect(f"file:{path}?{flags}", uri=True, timeout=busy_timeout_s)


def is_lock_error(exc: BaseException) -> bool:
    """SQLite gave up waiting for a lock another connection holds."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)
