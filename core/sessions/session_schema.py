"""Migrations of sessions.sqlite: functions named m00N_..., never renamed or reordered."""

from __future__ import annotations

from collections.abc import Callable

import sqlite_utils

from atomic_agent.storage.sqlite_transaction import transaction


def m001_initial(db: sqlite_utils.Database) -> None:
    db["sessions"].create({"id": str, "created_at": str, "updated_at": str, "working_dir": str,
                           "status": str, "title": str, "loaded_tools": str, "known_facts": str},
                          pk="id", if_not_exists=True)
    db["transcript"].create({"session_id": str, "seq": int, "turn_index": int, "kind": str, "text": str,
                             "tool": str, "args": str, "status": str, "reason": str, "reasoning": str,
                             "details": str, "step": int, "batch_index": int, "created_at": str},
                            pk=("session_id", "seq"), if_not_exists=True)
    # append-only: the database itself refuses to rewrite or delete single transcript rows
    db.execute("CREATE TRIGGER IF NOT EXISTS transcript_no_update BEFORE UPDATE ON transcript "
               "BEGIN SELECT RAISE(ABORT, 'transcript rows are append-only'); END")


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [m001_initial]


def migrate(db: sqlite_utils.Database) -> None:
    """Apply every migration not yet recorded in `_migrations` (idempotent)."""
    db["_migrations"].create({"name": str, "applied_at": str}, pk="name", if_not_exists=True)
    done = {row["name"] for row in db["_migrations"].rows}
    for step in MIGRATIONS:
        if step.__name__ not in done:
            step(db)  # each step is idempotent (IF NOT EXISTS), so a crash here is re-run safely
            with transaction(db.conn):
                db.execute("insert into _migrations (name, applied_at) values (?, datetime('now'))", [step.__name__])
