"""What the memory stores raise. Every message names the problem and how to fix it."""

from __future__ import annotations


class MemoryStoreError(RuntimeError):
    """Base class: the memory database could not do what was asked."""


class MemoryValidationError(MemoryStoreError, ValueError):
    """An input (key, value, content, tag, ...) is outside the limits; nothing was written."""


class MemoryDatabaseRefusedError(MemoryStoreError):
    """The file is corrupt or was written by a newer schema; it was left untouched."""


class MemoryDatabaseLockedError(MemoryStoreError):
    """Another process held the write lock for longer than the busy timeout."""
