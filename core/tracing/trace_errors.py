"""Errors a trace operation reports to the user; `str()` says what is wrong and what to do."""

from __future__ import annotations


class TraceError(Exception):
    """Base of every user-facing tracing error (the CLI prints it and exits 2)."""


class InvalidSessionIdError(TraceError, ValueError):
    """A session id that cannot be used as a trace file name."""


class SaltFileError(TraceError):
    """The salt file exists but cannot be used."""
