"""Open tasks.sqlite through the core storage layer: refuse a corrupt or newer file
untouched, then WAL (synchronous FULL: a task is an acknowledged obligation) + migrations.
`write()` is BEGIN IMMEDIATE ... COMMIT: the write lock is taken up front, so a claim read
inside it cannot be raced by another process."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from atomic_agent.api import SqliteStore

from .task_errors import TaskStoreError
from .task_schema import MIGRATIONS

TASKS_FILE = "tasks.sqlite"
DEFAULT_BUSY_TIMEOUT_S = 10.0


def tasks_db_path(state_dir: Path) -> Path:
    return Path(state_dir) / TASKS_FILE


class TaskDatabase(SqliteStore):
    migrations = MIGRATIONS
    busy_timeout_s = DEFAULT_BUSY_TIMEOUT_S
    # what differs from the PostgreSQL engine (postgresql_contract.QmarkEngine) in the store's SQL
    engine = "sqlite"
    lock_row = ""  # BEGIN IMMEDIATE already holds the whole file
    skip_locked = ""

    def refuse_locked(self, exc: sqlite3.DatabaseError, *, writing: bool) -> Exception:
        if writing:
            return TaskStoreError(f"{self.path} is locked by another process; nothing was written")
        return TaskStoreError(f"{self.path} is locked by another process; try again")

    def refuse_unreadable(self, exc: sqlite3.DatabaseError) -> Exception:
        return TaskStoreError(f"{self.path} is not a usable task database ({exc}); it was left untouched. Move it "
                              "aside to start with no tasks, or restore a backup")

    def refuse_unusable(self, exc: sqlite3.DatabaseError) -> Exception:
        return TaskStoreError(f"{self.path} cannot be used as a task database ({exc}); it was left untouched")

    def refuse_newer(self, newer: str) -> Exception:
        return TaskStoreError(f"{self.path} was written by a newer atomic-agent ({newer}; this build knows version "
                              f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent")
