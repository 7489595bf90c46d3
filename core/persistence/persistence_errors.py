"""Errors of the persistence layer; every message says what happened and what to do."""

from __future__ import annotations


class PersistenceError(RuntimeError):
    """Base class: the store could not do what was asked; nothing of the failed transaction
    was written."""


class StoreRefusedError(PersistenceError):
    """The file is corrupt, not a store, or was written by a newer build; it was left untouched."""


class StoreLockedError(PersistenceError):
    """Another process held the write lock past the busy timeout; nothing was written."""


class StoreFullError(PersistenceError):
    """The disk (or the configured size limit) is full; nothing of the transaction was written."""


class StoreClosedError(PersistenceError):
    """The store was closed; open it again."""


class TransactionAbortedError(PersistenceError):
    """The transaction can no longer commit (an earlier operation failed in a way that rolled it
    back); nothing of it was written."""


class TransactionMisuseError(PersistenceError):
    """The API was used in a way that would deadlock or break atomicity (a nested transaction on
    the same store, an operation on a finished transaction)."""


class StaleWriterError(PersistenceError):
    """A writer generation is no longer current: the turn was finalized or another writer took
    over, so this write must not happen."""


class QueueFullError(PersistenceError):
    """A durable queue already holds its maximum of pending messages."""
