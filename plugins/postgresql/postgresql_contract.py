"""The `shared_database` service as other plugins see it: the PostgreSQL database a fleet
shares (storage.url), for a plugin that keeps its own shared state there (tasks, Telegram
deliveries, webhook deliveries, MCP drift approvals, ...).

The service is None when storage.url is empty: the plugin keeps its embedded SQLite file.
A plugin owns its tables: it names its schema steps `<plugin>.mNNN_<what>` and applies them
with `ensure_schema`, which refuses (before writing) a database where a newer build of that
plugin applied a step this one does not know. SQL is psycopg's (`%s` placeholders).

Every method raises atomic_agent.api.SessionStoreError, password scrubbed and saying what to
check, when the database cannot be used; a transaction cut off mid-way was rolled back whole.
Times that decide between hosts (leases, due times) must be read from the database's clock
(`now()`, `clock_timestamp()`), never from a host's.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

SHARED_DATABASE_SERVICE = "shared_database"


class NamedLease(Protocol):
    """A fleet-wide lease on one name (a session-level advisory lock on a connection of its
    own): at most one process of the fleet holds it; the server drops it when the holder's
    connection ends (the process died, or its host went silent and keepalives gave up)."""

    name: str

    def held(self) -> bool:
        """Whether this process holds the lease now: checks the connection, and takes the lease
        again if the connection was lost and nobody else took it meanwhile."""

    def release(self) -> None:
        """Let go of the lease at once (idempotent)."""


class SharedDatabase(Protocol):
    """One PostgreSQL database shared by every runtime process of a fleet."""

    shown: str  # the database's url without its password, for messages

    def ensure_schema(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
        """Apply `owner`'s steps `(name, statements)` not yet recorded, each in one transaction,
        under the migration advisory lock; returns the names applied now. Every name must start
        with `owner + "."`. Raises SessionStoreError when the database holds a step of `owner`
        this build does not know (a newer build migrated it)."""

    def transaction(self) -> AbstractContextManager[Any]:
        """A pooled psycopg connection inside one transaction: leaving the block commits, an
        exception rolls all of it back. The commit is durable (synchronous) before the block
        returns, so whatever the caller acknowledges next survives a crash."""

    def connection(self) -> AbstractContextManager[Any]:
        """A pooled psycopg connection in autocommit mode, for reads and single statements."""

    def lease(self, name: str) -> NamedLease | None:
        """Try to take the fleet-wide lease `name`: the lease when this process now holds it,
        None when another process does."""
