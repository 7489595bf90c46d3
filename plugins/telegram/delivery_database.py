"""`<state>/telegram.sqlite`, the delivery records' embedded engine: opened through the core
storage layer (a corrupt or newer file refused untouched, then WAL with FULL durability and
the migrations of delivery_schema). On a fleet the same store runs on the shared database's
QmarkEngine instead; this class gives what differs in the store's SQL (none of the row locks:
`write()` is BEGIN IMMEDIATE, which holds the whole file)."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import SqliteStore

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
        return TelegramStoreNewerError(
            f"{self.path} was written by a newer atomic-agent ({newer}; this build knows schema version "
            f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent to use this state directory, "
            "or point --state-dir at another one")
