"""Opening a SQLite store file: refuse what is not ours untouched, classify SQLite errors.

The first check reads the 100-byte file header with plain file I/O, before SQLite ever opens
the file: a file that is not SQLite, or whose header says a newer schema or another program,
is refused without a single byte (or a -wal/-shm file) written. The second check asks SQLite
for the schema before anything is changed; it covers what the header cannot show (a newer
file whose header is stale because its WAL was never checkpointed, unknown migrations).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from atomic_agent.persistence.persistence_errors import (
    PersistenceError,
    StoreFullError,
    StoreLockedError,
    StoreRefusedError,
)
from atomic_agent.persistence.sqlite_schema import APPLICATION_ID, KNOWN_MIGRATIONS, MIGRATIONS_TABLE, SCHEMA_VERSION

_MAGIC = b"SQLite format 3\x00"
_MOVE_ASIDE = "Move the file aside (or restore a backup) to start a fresh store"


def classify_sqlite_error(exc: sqlite3.Error, path: Path, busy_timeout_s: float) -> PersistenceError:
    """Turn a sqlite3 error into the store's error with a message saying what to do."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text.lower():
        error: PersistenceError = StoreLockedError(
            f"{path} is locked by another process (waited {busy_timeout_s:g} s for it); nothing was written. "
            "Close the other atomic-agent process (or wait for it) and try again")
    elif name == "SQLITE_FULL" or "full" in text.lower():
        error = StoreFullError(
            f"{path}: the disk or the store's size limit is full ({text}); nothing of this transaction was "
            "written and everything committed before is intact. Free disk space and try again")
    elif name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        error = StoreRefusedError(
            f"{path} is damaged ({text}); nothing more was written to it. {_MOVE_ASIDE}, and run "
            "`sqlite3 FILE 'PRAGMA integrity_check'` on the copy to see what survived")
    elif name.startswith("SQLITE_IOERR"):
        error = PersistenceError(
            f"{path}: the disk reported an I/O error ({text}); the transaction was not written. Check the "
            "disk and try again")
    elif name.startswith("SQLITE_READONLY"):
        error = PersistenceError(f"{path} is read-only ({text}); give this user write access to the file "
                                 "and its directory")
    elif name.startswith("SQLITE_CANTOPEN"):
        error = PersistenceError(f"{path} cannot be opened ({text}); check that its directory exists and "
                                 "is writable")
    else:
        error = PersistenceError(f"{path}: {text}")
    error.__cause__ = exc
    return error


def check_header(path: Path) -> None:
    """Plain-file checks before SQLite opens `path`; a missing or empty file is a new store."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return
    with open(path, "rb") as handle:
        header = handle.read(100)
    if len(header) < 100 or not header.startswith(_MAGIC):
        raise StoreRefusedError(f"{path} is not a SQLite database (corrupt, truncated, or another kind of "
                                f"file); it was left untouched. {_MOVE_ASIDE}")
    user_version = int.from_bytes(header[60:64], "big")
    application_id = int.from_bytes(header[68:72], "big")
    _check_identity(path, application_id, user_version)


def _check_identity(path: Path, application_id: int, user_version: int) -> None:
    if application_id not in (0, APPLICATION_ID):
        raise StoreRefusedError(f"{path} belongs to another program (application id {application_id:#x}); "
                                "it was left untouched. Point the store at a different file")
    if user_version > SCHEMA_VERSION:
        raise StoreRefusedError(
            f"{path} was written by a newer atomic-agent (store schema version {user_version}; this build "
            f"knows version {SCHEMA_VERSION}); it was left untouched. Upgrade atomic-agent, or use another "
            "state dir")


def check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """SQLite-level checks, read-only. Raises sqlite3.Error for the caller to classify."""
    application_id = conn.execute("PRAGMA application_id").fetchone()[0]
    user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    _check_identity(path, application_id, user_version)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if MIGRATIONS_TABLE not in tables:
        foreign = sorted(t for t in tables if not t.startswith("sqlite_"))
        if foreign:
            raise StoreRefusedError(
                f"{path} holds other tables ({', '.join(foreign[:5])}) and is not an atomic-agent store; it "
                "was left untouched. Point the store at a different file")
        return
    applied = {row[0] for row in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
    unknown = sorted(applied - KNOWN_MIGRATIONS)
    if unknown:
        raise StoreRefusedError(
            f"{path} was written by a newer atomic-agent (migrations {', '.join(unknown)} are unknown to "
            "this build); it was left untouched. Upgrade atomic-agent, or use another state dir")


def connect(path: Path, busy_timeout_s: float, *, query_only: bool = False) -> sqlite3.Connection:
    """An autocommit connection (transactions are explicit BEGIN IMMEDIATE) with the busy
    timeout; `check_same_thread=False` only because a connection is handed to its owning thread
    once, never shared."""
    conn = sqlite3.connect(os.fspath(path), timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    if query_only:
        conn.execute("PRAGMA query_only = ON")
    return conn


def prepare_file(path: Path, busy_timeout_s: float) -> None:
    """Schema checks, WAL and migrations on a short-lived connection of the opening thread."""
    import sqlite_utils

    from atomic_agent.persistence.sqlite_schema import migrate

    wal = path.with_name(path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        # a leftover WAL (another process, or a crash) may hold a newer schema the header does not
        # show yet; check it read-only, because closing a read-write connection would checkpoint
        # that WAL into the main file before we know the file is ours to change
        _check_read_only(path, busy_timeout_s)
    try:
        conn = connect(path, busy_timeout_s)
    except sqlite3.Error as exc:
        raise classify_sqlite_error(exc, path, busy_timeout_s) from exc
    try:
        check_schema(conn, path)
        if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        migrate(sqlite_utils.Database(conn))
    except StoreRefusedError:
        raise
    except sqlite3.Error as exc:
        raise classify_sqlite_error(exc, path, busy_timeout_s) from exc
    finally:
        conn.close()


def _check_read_only(path: Path, busy_timeout_s: float) -> None:
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=busy_timeout_s, isolation_level=None)
    except sqlite3.Error as exc:
        raise classify_sqlite_error(exc, path, busy_timeout_s) from exc
    try:
        check_schema(conn, path)
    except sqlite3.Error as exc:
        raise classify_sqlite_error(exc, path, busy_timeout_s) from exc
    finally:
        conn.close()
