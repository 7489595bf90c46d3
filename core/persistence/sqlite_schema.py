"""Schema of a SQLite store: migration functions m00N_..., never renamed or reordered.

Every step is idempotent (IF NOT EXISTS), so a crash between a step and its
`store_migrations` row is repaired by running it again. `PRAGMA user_version` mirrors the
number of steps and `PRAGMA application_id` marks the file as ours, so a newer file or another
program's file is recognised from its header before anything touches it. Tables are prefixed
`store_` so they can never be mistaken for another component's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

APPLICATION_ID = 0x41414753  # "AAGS": atomic-agent store
MIGRATIONS_TABLE = "store_migrations"

_M001 = (
    """CREATE TABLE IF NOT EXISTS store_streams (
         stream TEXT PRIMARY KEY,
         last_seq INTEGER NOT NULL
       ) WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS store_records (
         stream TEXT NOT NULL,
         seq INTEGER NOT NULL,
         body TEXT NOT NULL,
         written_at REAL NOT NULL,
         PRIMARY KEY (stream, seq)
       ) WITHOUT ROWID""",
    # the database itself refuses to rewrite a record or to move a stream's counter backwards,
    # independently of the code paths that never try
    """CREATE TRIGGER IF NOT EXISTS store_records_append_only BEFORE UPDATE ON store_records
       BEGIN SELECT RAISE(ABORT, 'store records are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS store_streams_monotonic BEFORE UPDATE ON store_streams
       WHEN NEW.last_seq <= OLD.last_seq
       BEGIN SELECT RAISE(ABORT, 'a stream sequence never goes backwards'); END""",
    """CREATE TABLE IF NOT EXISTS store_kv (
         key TEXT PRIMARY KEY,
         value TEXT NOT NULL
       ) WITHOUT ROWID""",
)


def m001_streams_and_kv(db: Any) -> None:
    """Append-only streams with a per-stream counter, and the sorted key-value space."""
    for ddl in _M001:
        db.execute(ddl)


MIGRATIONS: list[Callable[[Any], None]] = [m001_streams_and_kv]
SCHEMA_VERSION = len(MIGRATIONS)
KNOWN_MIGRATIONS = frozenset(step.__name__ for step in MIGRATIONS)


def _up_to_date(conn: Any) -> bool:
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if MIGRATIONS_TABLE not in tables:
        return False
    applied = {row[0] for row in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE}")}
    return (KNOWN_MIGRATIONS <= applied
            and conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            and conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID)


def migrate(db: Any) -> list[str]:
    """Apply every step not yet recorded, each in its own BEGIN IMMEDIATE transaction with its
    bookkeeping row; returns the names applied now. `db` is a sqlite_utils.Database."""
    ran: list[str] = []
    conn = db.conn
    if _up_to_date(conn):  # the common case needs no write lock at all
        return ran
    conn.execute("BEGIN IMMEDIATE")
    try:
        db[MIGRATIONS_TABLE].create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
        done = {row["name"] for row in db[MIGRATIONS_TABLE].rows}
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    for step in MIGRATIONS:
        if step.__name__ in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            step(db)
            conn.execute(f"INSERT OR IGNORE INTO {MIGRATIONS_TABLE} (name, applied_at) "
                         "VALUES (?, datetime('now'))", [step.__name__])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        ran.append(step.__name__)
    if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    return ran
