"""Where traces live on disk and which session ids may name a trace file."""

from __future__ import annotations

import re
from pathlib import Path

# Errors a trace operation reports to the user; `str()` says what is wrong and what to do.

class TraceError(Exception):
    """Base of every user-facing tracing error (the CLI prints it and exits 2)."""


class InvalidSessionIdError(TraceError, ValueError):
    """A session id that cannot be used as a trace file name."""


class SaltFileError(TraceError):
    """The salt file exists but cannot be used."""


TRACES_DIR_NAME = "traces"
TRACE_SUFFIX = ".ndjson"

# session ids become file names: no separators, no leading dot, nothing a shell mangles
_SESSION_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,199}$")


def validate_session_id(session_id: str) -> str:
    """Return `session_id` unchanged, or raise naming what is wrong with it."""
    if not isinstance(session_id, str) or not _SESSION_ID.match(session_id) or ".." in session_id:
        raise InvalidSessionIdError(
            f"session id {session_id!r} cannot name a trace file: use 1-200 characters from "
            "letters, digits and _ . : @ + -, not starting with a dot or dash and without '..'")
    return session_id


def traces_dir(state_dir: Path) -> Path:
    return Path(state_dir) / TRACES_DIR_NAME


def trace_path(state_dir: Path, session_id: str) -> Path:
    """`<state>/traces/<session_id>.ndjson` for a valid session id."""
    return traces_dir(state_dir) / f"{validate_session_id(session_id)}{TRACE_SUFFIX}"
