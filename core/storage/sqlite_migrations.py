"""Schema migrations of a state file: functions named `m00N_...`, never renamed or reordered.

Every step is idempotent (it checks what exists before changing it), so a crash between a
step and its `_migrations` row is repaired by running it again. `PRAGMA user_version`
mirrors the number of steps, so a file written by a newer build can be recognised (and
refused) before anything touches it.
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


@attrs.frozen
class SchemaState:
    """What a file says about its schema, read without writing."""

    version: int
    applied: frozenset[str]

    def newer_than(self, steps: Sequence[Migration]) -> str | None:
        """Why this build cannot use the file (its schema is newer), or None."""
        unknown = sorted(self.applied - {step.__name__ for step in steps})
        if self.version <= len(steps) and not unknown:
            return None
        return f"schema version {self.version}" + (f", migrations {', '.join(unknown)}" if unknown else "")


def read_schema_state(conn: sqlite3.Connection) -> SchemaState:
    """Read-only: the user_version and recorded migrations (raises sqlite3.DatabaseError on a
    file that is not a database)."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    applied = frozenset(row[0] for row in conn.execute("SELECT name FROM _migrations")) if "_migrations" in tables \
        else frozenset()
    return SchemaState(version, applied)


def migrate(conn: sqlite3.Connection, steps: Sequence[Migration]) -> list[str]:
    """Apply every step not yet recorded in `_migrations`; returns the names applied now.

    A file that is already up to date is only read: sqlite-utils (about 20 ms of imports)
    is loaded only when a step has to run, which keeps it off every later start."""
    schema = read_schema_state(conn)
    names = [step.__name__ for step in steps]
    if schema.version == len(steps) and schema.applied.issuperset(names):
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
        db.execute(f"PRAGMA user_version = {len(steps)}")
    return ran
