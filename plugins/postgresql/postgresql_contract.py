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

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

SHARED_DATABASE_SERVICE = "shared_database"
# What `storage migrate` copies between a state dir and the fleet's database: every plugin that
# keeps shared state provides this service (ServiceSpec multiple=True), its factory answering a
# sequence of SharedSqliteState / SharedFileState, whatever storage.url says (it is read by a
# command without a runtime: the factory may use nothing of the runtime view).
SHARED_STATE_SERVICE = "shared_state"


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


class QmarkEngine(Protocol):
    """A plugin's tables in the fleet's database behind what a SqliteStore offers (`query`,
    `write`, `closed`, `close`), so one store's SQL text serves its SQLite file and this
    database: `?` placeholders, rows as dicts by column name. SQL both engines accept
    (`INSERT ... ON CONFLICT ... DO NOTHING`, `RETURNING`, CASE rather than MAX/GREATEST)
    needs nothing else; where they differ, `engine` names this one ("postgresql") and the
    row-lock suffixes are given (a SQLite store sets them to "": BEGIN IMMEDIATE holds the
    whole file).

    Errors: every method raises the plugin's own error (`refuse(message)`, the message
    scrubbed of the password and saying what to check) when the database cannot be used; a
    transaction cut off mid-way was rolled back whole."""

    engine: str
    path: str  # the database's url without its password, for messages
    closed: bool
    lock_row: str  # " FOR UPDATE": a row read inside write() to decide a write stays ours
    skip_locked: str  # " FOR UPDATE SKIP LOCKED": a row another process is claiming is skipped

    def write(self) -> AbstractContextManager[Any]:
        """One transaction, committed durably when the block ends (an exception rolls it all
        back); it yields an object whose `execute(sql, params)` takes `?` SQL and answers a
        cursor (`fetchone`, `fetchall`, `rowcount`). A `query` on the same thread inside the
        block runs in this transaction (its row locks hold until the commit)."""

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        """The rows of one read (`?` SQL), each a dict by column name."""

    def close(self) -> None:
        """Marks it closed (the pool is the shared database's)."""


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

    def pending_steps(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
        """The names of `owner`'s steps the database has not recorded yet, read without writing
        anything (no step is applied, not even the core's): what `doctor` and `status` ask
        before reading `owner`'s tables. Raises SessionStoreError when the database cannot be
        reached or holds a step of `owner` this build does not know."""

    def read_only(self) -> AbstractContextManager[Any]:
        """A psycopg connection of its own inside one READ ONLY transaction, closed when the
        block ends: what `doctor` and `status` read with. Unlike `connection`, opening it
        applies no schema (the pool's first use migrates the core's), and any write in it is
        refused by the database. A table a plugin's steps create may be missing: ask
        `pending_steps`, or check with `to_regclass`."""

    def read_only_qmark(self, owner: str, refuse: Callable[[str], Exception]) -> AbstractContextManager[QmarkEngine]:
        """`read_only()` behind the QmarkEngine interface, so a plugin's store answers `doctor`
        and `status` with its own read SQL. It applies no schema (`owner`'s tables may be
        missing or older: ask `pending_steps` first) and writes nothing: its `write()` raises
        `refuse(message)` at once, and a writing statement given to `query` is refused by the
        database (READ ONLY transaction), as `refuse(message)` too. Closed when the block ends."""

    def lease(self, name: str) -> NamedLease | None:
        """Try to take the fleet-wide lease `name`: the lease when this process now holds it,
        None when another process does."""

    def lease_held(self, name: str) -> bool:
        """Whether some process of the fleet holds the lease `name` right now, read from
        pg_locks: looking takes nothing (a probe by `lease` would, for a moment, hold a dead
        holder's lease) and writes nothing, so a status or doctor line may ask at any time."""

    def qmark_engine(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]],
                     refuse: Callable[[str], Exception]) -> QmarkEngine:
        """When a plugin's store opens on the fleet's database: `owner`'s schema `steps`
        ensured (as `ensure_schema`), then the engine its `?` SQL runs on. Raises
        `refuse(message)` when the database cannot be used or holds a newer build's step."""


class SharedSqliteState(Protocol):
    """One SQLite file of the state dir whose tables have twins in the fleet's database.

    `tables` are `(pg table, sqlite table, key columns, identity column or "")`: the columns
    copied are those both tables have; the identity (an AUTOINCREMENT column in SQLite) moves
    past every id the source handed out. `forms` names, for a column whose two sides store a
    value differently, `"<pg table>.<column>": (pg read, pg write, sqlite read, sqlite write)`:
    SQL reading each side as the same value (what is hashed) and the placeholder (`%s` / `?`)
    writing that value; e.g. a timestamptz against epoch seconds."""

    owner: str  # whose schema steps (`ensure_schema`'s owner; "" for the core's own)
    schema_steps: Sequence[tuple[str, Sequence[str]]]
    path: str  # the file, relative to the state dir
    tables: Sequence[tuple[str, str, Sequence[str], str]]
    forms: Mapping[str, tuple[str, str, str, str]]

    def open_sqlite(self, state_dir: Path) -> AbstractContextManager[Any]:
        """The file's sqlite3 connection (autocommit) through its own store, created or
        migrated to this build's schema; closed when the block ends."""


@runtime_checkable
class SharedFileState(Protocol):
    """A state file that is not SQLite (a JSON-lines log, a JSON document) kept as one table
    in the fleet's database: its rows, in `columns` order, are what both sides are hashed by.
    `forms` maps a column to `(pg read, pg write)` SQL where the table stores it differently."""

    owner: str
    schema_steps: Sequence[tuple[str, Sequence[str]]]
    path: str
    table: str
    columns: Sequence[str]
    key: str  # what orders the table's rows as the file orders them
    identity: str  # the table's identity column, or ""
    forms: Mapping[str, tuple[str, str]]

    def read_rows(self, state_dir: Path) -> list[tuple[Any, ...]]:
        """The file's rows in file order ([] when it is absent)."""

    def write_rows(self, state_dir: Path, rows: Sequence[tuple[Any, ...]]) -> None:
        """Write the file afresh from `rows` (the state dir had none of it)."""


@runtime_checkable
class FleetLeaseHolders(Protocol):
    """A shared state (SharedSqliteState / SharedFileState) whose rows name the fleet-wide
    leases (`SharedDatabase.lease` names) of the processes doing its work, for `doctor`'s
    lease health. `leases` are `(what holds them, SQL)`: the SQL answers rows `(lease name,
    live work count)` from the plugin's tables, e.g. each registered task runner and its
    running tasks. A lease nobody holds with live work is a dead process's work."""

    leases: Sequence[tuple[str, str]]
