"""Schema migrations of a state file: functions named `m00N_...`, never renamed or reordered.

Every step is idempotent (it checks what exists before changing it), so a crash between a
step and its `_migrations` row is repaired by running it again. `PRAGMA user_version`
mirrors the number of steps, so a file written by a newer build can be recognised (and
refused) before anything touches it: `refuse_newer_schema` is the check a store passes to
`open_sqlite(inspect=...)`, and `migrate` runs it again, so no state file is ever downgraded
(its version rewritten to this build's) whichever way it was opened. The build that last
migrated a file is kept in `_schema_writer`, so the refusal can name it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs

from atomic_agent.storage import store_clock
from atomic_agent.storage.sqlite_transaction import transaction

if TYPE_CHECKING:
    import sqlite_utils

Migration = Callable[["sqlite_utils.Database"], None]
WRITER_TABLE = "_schema_writer"


class NewerSchemaError(Exception):
    """The file was written by a newer build: this one would have to guess at its schema.
    Deliberately not a sqlite3.DatabaseError, so no caller mistakes it for damage (whose fix,
    moving the file aside, would throw the newer build's data away)."""

    def __init__(self, path: str, newer: str, known: int, writer: str | None) -> None:
        from atomic_agent import __version__

        super().__init__(
            f"{path} was written by a newer atomic-agent ({newer}); this build (atomic-agent {__version__}) knows "
            f"schema version {known} and would have to rewrite it, losing what it does not understand. It was "
            f"left untouched. Upgrade atomic-agent{f' to {writer} or later' if writer else ''} to use this state "
            "directory, or point --state-dir / $ATOMIC_AGENT_STATE_DIR at another one")
        self.path = path
        self.writer = writer


@attrs.frozen
class SchemaState:
    """What a file says about its schema, read without writing."""

    version: int
    applied: frozenset[str]
    writer: str | None = None  # the atomic-agent build that last migrated the file (None: not recorded)

    def newer_than(self, steps: Sequence[Migration]) -> str | None:
        """Why this build cannot use the file (its schema is newer, and which build wrote it), or None."""
        unknown = sorted(self.applied - {step.__name__ for step in steps})
        if self.version <= len(steps) and not unknown:
            return None
        return (f"schema version {self.version}" + (f", migrations {', '.join(unknown)}" if unknown else "")
                + (f", written by atomic-agent {self.writer}" if self.writer else ""))

    def older_than(self, steps: Sequence[Migration]) -> bool:
        """Whether some of `steps` is not applied yet: the file is an older build's, which the
        next store opening it migrates."""
        return self.version < len(steps) or not self.applied.issuperset(step.__name__ for step in steps)


def read_schema_state(conn: sqlite3.Connection) -> SchemaState:
    """Read-only: the user_version and recorded migrations (raises sqlite3.DatabaseError on a
    file that is not a database)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    applied = frozenset(row[0] for row in conn.execute("SELECT name FROM _migrations")) if "_migrations" in tables \
        else frozenset()
    writer = None
    if WRITER_TABLE in tables:
        row = conn.execute(f"SELECT build FROM {WRITER_TABLE} WHERE id = 1").fetchone()
        writer = str(row[0]) if row and row[0] else None
    return SchemaState(version, applied, writer)


def _file_of(conn: sqlite3.Connection) -> str:
    for _seq, name, filename in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(filename or ":memory:")
    return "the database"


def check_not_newer(conn: sqlite3.Connection, steps: Sequence[Migration]) -> None:
    """Raise NewerSchemaError when the file's schema is newer than `steps` (read-only)."""
    schema = read_schema_state(conn)
    newer = schema.newer_than(steps)
    if newer is not None:
        raise NewerSchemaError(_file_of(conn), newer, len(steps), schema.writer)


def refuse_newer_schema(steps: Sequence[Migration]) -> Callable[[sqlite3.Connection], None]:
    """An `open_sqlite(inspect=...)` check: a newer file is refused before WAL is switched on."""
    return lambda conn: check_not_newer(conn, steps)


def migrate(conn: sqlite3.Connection, steps: Sequence[Migration]) -> list[str]:
    """Apply every step not yet recorded in `_migrations`; returns the names applied now.

    A file that is already up to date is only read: sqlite-utils (about 20 ms of imports)
    is loaded only when a step has to run, which keeps it off every later start."""
    schema = read_schema_state(conn)
    newer = schema.newer_than(steps)
    if newer is not None:  # never rewrite a newer file's version down to ours
        raise NewerSchemaError(_file_of(conn), newer, len(steps), schema.writer)
    if not schema.older_than(steps):
        return []
    from atomic_agent.unused_extras import import_sqlite_utils

    # no sqlite-utils plugins: whatever else is installed has no business on a state file's
    # connection, and finding them scans every installed distribution (~7 ms of a first run)
    db = import_sqlite_utils().Database(conn, execute_plugins=False)
    db["_migrations"].create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    ran: list[str] = []
    for step in steps:
        if step.__name__ not in done:
            step(db)
            with transaction(conn):
                db.execute("INSERT OR IGNORE INTO _migrations (name, applied_at) VALUES (?, ?)",
                           [step.__name__, store_clock.now_iso()])
            ran.append(step.__name__)
    if ran or db.execute("PRAGMA user_version").fetchone()[0] != len(steps):
        from atomic_agent import __version__

        with transaction(conn):
            conn.execute(f"CREATE TABLE IF NOT EXISTS {WRITER_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), "
                         "build TEXT NOT NULL, version INTEGER NOT NULL, written_at TEXT NOT NULL)")
            conn.execute(f"INSERT OR REPLACE INTO {WRITER_TABLE} (id, build, version, written_at) VALUES (1, ?, ?, ?)",
                         [__version__, len(steps), store_clock.now_iso()])
            conn.execute(f"PRAGMA user_version = {len(steps)}")
    return ran
