"""Errors of sessions.sqlite, and the translation of raw SQLite failures into them.

Every message names the file and says what to do: a caller shows it as is.
"""

from __future__ import annotations

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
