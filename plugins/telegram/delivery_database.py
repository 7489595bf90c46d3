"""`<state>/telegram.sqlite`, the delivery records' embedded engine: opened through the core
storage layer (a corrupt or newer file refused untouched, then WAL with FULL durability and
the migrations of delivery_schema). On a fleet the same store runs on the shared database's
QmarkEngine instead; this class gives what differs in the store's SQL (none of the row locks:
`write()` is BEGIN IMMEDIATE, which holds the whole file). `doctor` and `status` read it
through DeliveryFileLook instead, which neither creates nor migrates it."""

from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from atomic_agent.api import SqliteStore, open_sqlite_read_only, sqlite_migrations

from .delivery_schema import MIGRATIONS

DB_FILE = "telegram.sqlite"


class TelegramStoreNewerError(RuntimeError):
    """telegram.sqlite belongs to a newer build; not a sqlite3.DatabaseError (it is not damage)."""


def db_path(state_dir: Path) -> Path:
    return state_dir / DB_FILE


class DeliveryDatabase(SqliteStore):
    migrations = MIGRATIONS
    engine = "sqlite"
    lock_row = ""
    skip_locked = ""

    def refuse_newer(self, newer: str) -> Exception:
        return newer_refusal(self.path, newer)


def newer_refusal(path: Path, newer: str) -> TelegramStoreNewerError:
    return TelegramStoreNewerError(
        f"{path} was written by a newer atomic-agent ({newer}; this build knows schema version "
        f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent to use this state directory, "
        "or point --state-dir at another one")


class DeliveryFileLook:
    """An existing telegram.sqlite opened read-only (`mode=ro`) with DeliveryDatabase's read
    interface, for `doctor` and `status`: no WAL switch, no migration, and `write()` refused.
    `schema` is what the file says of its own, to be checked before its tables are read."""

    engine = "sqlite"
    lock_row = ""
    skip_locked = ""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.closed = False
        self.conn = open_sqlite_read_only(path)
        try:
            self.schema = sqlite_migrations.read_schema_state(self.conn)
        except BaseException:
            self.conn.close()
            raise

    def older(self) -> bool:
        """An older build's file, which the next store opening it migrates (its tables may
        have their old names): not read as this build's."""
        return self.schema.older_than(MIGRATIONS)

    def write(self) -> AbstractContextManager[Any]:
        raise sqlite3.OperationalError(f"{self.path} is open read-only here (doctor, status look without "
                                       "writing): nothing was written")

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, params)
        cols = [d[0] for d in cursor.description]
        return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.conn.close()
