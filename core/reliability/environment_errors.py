"""Errors of the environment (the state directory), told apart and explained in one sentence.

A command that meets a damaged database, a read-only directory or a full disk must say
which of the three it is and what to do, never print a traceback: `explain_environment_error`
is what the CLI prints, `is_lasting_store_failure` is what the lifecycle asks before it
settles a turn that could not start (a lock is worth waiting out; damage is not).
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from atomic_agent.sessions.store_errors import SessionStoreError, SessionStoreFullError, SessionStoreLockedError

DAMAGED_WORDS = ("malformed", "not a database", "corrupt", "disk i/o error")
READ_ONLY_WORDS = ("readonly", "read-only")
UNWRITABLE_WORDS = ("unable to open database", "permission denied")


def environment_kind(exc: BaseException) -> str | None:
    """"damaged" | "read_only" | "full" | "locked" | "unwritable" for a storage failure, else None."""
    if isinstance(exc, SessionStoreLockedError):
        return "locked"
    if isinstance(exc, SessionStoreFullError):
        return "full"
    if isinstance(exc, OSError):
        return {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "read_only", errno.EACCES: "unwritable",
                errno.EPERM: "unwritable", errno.EIO: "damaged"}.get(exc.errno or 0)
    if isinstance(exc, (sqlite3.DatabaseError, SessionStoreError)):
        text = str(exc).lower()
        if "locked" in text or "busy" in text:
            return "locked"
        if "full" in text:
            return "full"
        if any(word in text for word in READ_ONLY_WORDS):
            return "read_only"
        if any(word in text for word in UNWRITABLE_WORDS):
            return "unwritable"
        if any(word in text for word in DAMAGED_WORDS) or type(exc) is sqlite3.DatabaseError:
            return "damaged"
        return None
    return None


def is_lasting_store_failure(exc: BaseException) -> bool:
    """A failure that retrying soon will not cure (damage, a full or read-only disk)."""
    return environment_kind(exc) in ("damaged", "full", "read_only", "unwritable")


def explain_environment_error(exc: BaseException, state_dir: Path | None) -> str | None:
    """One paragraph for the user, or None when `exc` is not an environment error."""
    cause: BaseException | None = exc
    kind = None
    while cause is not None and kind is None:  # a typed store error may wrap the raw one
        kind = environment_kind(cause)
        cause = cause.__cause__ if kind is None else cause
    if kind is None:
        return None
    where = f"the state directory {state_dir}" if state_dir else "the state directory"
    detail = f"{type(exc).__name__}: {exc}"
    advice = {
        "damaged": f"a database in {where} is damaged ({detail}). Nothing more was written. Run `atomic-agent "
                   "doctor` to see which file; `atomic-agent doctor --move-aside <file>` keeps it as evidence and "
                   "the next command starts a fresh one (or restore a backup)",
        "full": f"the disk holding {where} is full ({detail}). Nothing of the failed write was kept and everything "
                "accepted earlier is intact; free some space and run the command again",
        "read_only": f"{where} is read-only ({detail}). Nothing was written; make it writable (or pass a "
                     "writable --state-dir) and run the command again",
        "unwritable": f"{where} cannot be written by this user ({detail}). Nothing was written; fix its "
                      "permissions and run the command again",
        "locked": f"a database in {where} is locked by another atomic-agent process ({detail}); nothing was "
                  "written. Retry when it is idle",
    }[kind]
    return f"atomic-agent: {advice}."
