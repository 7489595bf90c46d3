"""Errors of sessions.sqlite, and the translation of raw SQLite failures into them.

Every message names the file and says what to do: a caller shows it as is.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from atomic_agent.storage.sqlite_file import is_lock_error


class SessionNotFoundError(LookupError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session {session_id!r}; `atomic-agent sessions list` shows the ids")
        self.session_id = session_id


class SessionStoreError(RuntimeError):
    """The database cannot be used (corrupt, locked, unreadable); the message says what to do."""


class SessionStoreLockedError(SessionStoreError):
    """Another connection held the write lock past the busy timeout; nothing was written."""


class SessionStoreFullError(SessionStoreError):
    """The disk (or the database's size limit) is full; nothing of the transaction was written."""


class StaleWriterError(SessionStoreError):
    """The write belongs to a turn generation that is no longer the running one (the turn was
    finalized, stopped or fenced out by recovery); it was refused and rolled back."""


@contextmanager
def explain_write_failures(path: Path) -> Iterator[None]:
    """Re-raise a lock timeout or a full disk as a typed error naming `path`.

    The transaction that failed was rolled back by `transaction()`, so the message can
    promise that everything committed earlier is intact."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if is_lock_error(exc):
            raise SessionStoreLockedError(
                f"{path} is locked by another process (it held the write lock past the busy timeout); "
                "nothing was written and everything accepted earlier is intact. Retry, or stop the other "
                "atomic-agent process using this state directory") from exc
        if "full" in str(exc).lower():
            raise SessionStoreFullError(
                f"{path} cannot grow: the disk or the database size limit is full; nothing was written and "
                "everything accepted earlier is intact. Free some space and retry") from exc
        raise


def open_failure(path: Path, exc: sqlite3.DatabaseError | OSError) -> SessionStoreError:
    """The error for a store that could not be opened, told apart by cause: only a damaged
    file is worth moving aside; a full disk, a lock or a read-only directory are not damage,
    and moving an intact database aside for them would throw away every session in it."""
    text = str(exc).lower()
    code = exc.errno if isinstance(exc, OSError) else None
    if code in (errno.ENOSPC, errno.EDQUOT) or (isinstance(exc, sqlite3.DatabaseError) and "full" in text):
        return SessionStoreFullError(
            f"{path} cannot be opened: the disk is full ({exc}). The database is not damaged — do not move it "
            "aside; free some space on that disk and run the command again")
    if isinstance(exc, sqlite3.DatabaseError) and is_lock_error(exc):
        return SessionStoreLockedError(
            f"{path} is locked by another process ({exc}); nothing was written. Retry, or stop the other "
            "atomic-agent process using this state directory")
    if code == errno.EROFS or "readonly" in text or "read-only" in text:
        return SessionStoreError(
            f"{path} cannot be opened for writing: it is on a read-only file system or read-only ({exc}). "
            "The database is not damaged; make it writable or pass a writable --state-dir")
    if code in (errno.EACCES, errno.EPERM) or "unable to open" in text or "permission denied" in text:
        return SessionStoreError(
            f"{path} cannot be opened: permission denied or its directory cannot be written ({exc}). The "
            "database is not damaged; fix the permissions of the state directory and this file")
    return SessionStoreError(
        f"{path} cannot be used as a session database ({exc}); it was left untouched. `atomic-agent doctor` "
        f"checks every state file; `atomic-agent doctor --move-aside {path.name}` moves it aside (renamed, "
        "never deleted) so the next command starts a fresh one")
