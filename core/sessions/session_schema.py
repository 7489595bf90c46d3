"""Migrations of sessions.sqlite: functions named m00N_..., never renamed or reordered
(applied by storage.sqlite_migrations)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.storage.sqlite_migrations import Migration

if TYPE_CHECKING:
    import sqlite_utils


def m001_initial(db: sqlite_utils.Database) -> None:
    db.table("sessions").create({"id": str, "created_at": str, "updated_at": str, "working_dir": str,
                                 "status": str, "title": str, "loaded_tools": str, "known_facts": str},
                                pk="id", if_not_exists=True)
    db.table("transcript").create({"session_id": str, "seq": int, "turn_index": int, "kind": str, "text": str,
                                   "tool": str, "args": str, "status": str, "reason": str, "reasoning": str,
                                   "details": str, "step": int, "batch_index": int, "created_at": str},
                                  pk=("session_id", "seq"), if_not_exists=True)
    # append-only: the database itself refuses to rewrite or delete single transcript rows
    db.execute("CREATE TRIGGER IF NOT EXISTS transcript_no_update BEFORE UPDATE ON transcript "
               "BEGIN SELECT RAISE(ABORT, 'transcript rows are append-only'); END")


# the final states m002 created the ledger with (m007 adds `resumed`, and `parked` as a live one)
M002_TERMINAL_TURN_STATES = ("completed", "failed", "stopped", "cancelled", "interrupted", "merged")
TERMINAL_TURN_STATES = (*M002_TERMINAL_TURN_STATES, "resumed")


def _turns_table(name: str, live: tuple[str, ...], terminal: tuple[str, ...]) -> str:
    states = ", ".join(f"'{s}'" for s in (*live, *terminal))
    return (f"CREATE TABLE IF NOT EXISTS {name} (turn_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, "
            "lane TEXT NOT NULL, admitted_order INTEGER NOT NULL UNIQUE, state TEXT NOT NULL CHECK (state IN "
            f"({states})), origin TEXT NOT NULL, text TEXT NOT NULL, generation INTEGER NOT NULL DEFAULT 0, "
            "turn_index INTEGER, reason TEXT, category TEXT, response_hash TEXT, merged_into TEXT, owner TEXT, "
            "admitted_at TEXT NOT NULL, started_at TEXT, finished_at TEXT)")


def _turns_indexes_and_freeze(db: sqlite_utils.Database, terminal: tuple[str, ...]) -> None:
    db.execute("CREATE INDEX IF NOT EXISTS turns_by_lane ON turns (lane, state, admitted_order)")
    db.execute("CREATE INDEX IF NOT EXISTS turns_by_state ON turns (state, admitted_order)")
    # a finalized turn is a frozen fact: no stale writer can move it again or rewrite its hash
    finals = ", ".join(f"'{s}'" for s in terminal)
    db.execute(f"CREATE TRIGGER IF NOT EXISTS turns_final_is_frozen BEFORE UPDATE ON turns "
               f"WHEN OLD.state IN ({finals}) "
               "BEGIN SELECT RAISE(ABORT, 'a finalized turn cannot change'); END")


def m002_turn_ledger(db: sqlite_utils.Database) -> None:
    """The durable turn lifecycle: admission ledger, append-only audit, steering queue."""
    db.execute(_turns_table("turns", ("queued", "running"), M002_TERMINAL_TURN_STATES))
    # the admission counter lives in the database so a restarted process continues after it
    db.execute("CREATE TABLE IF NOT EXISTS turn_counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
    _turns_indexes_and_freeze(db, M002_TERMINAL_TURN_STATES)
    db.execute(
        "CREATE TABLE IF NOT EXISTS turn_audit (audit_id INTEGER PRIMARY KEY AUTOINCREMENT, turn_id TEXT NOT NULL, "
        "session_id TEXT NOT NULL, lane TEXT NOT NULL, from_state TEXT, to_state TEXT NOT NULL, "
        "generation INTEGER NOT NULL, reason TEXT, owner TEXT, at TEXT NOT NULL)")
    # the audit is the independent record invariants are checked against: never rewritten
    for op in ("UPDATE", "DELETE"):
        db.execute(f"CREATE TRIGGER IF NOT EXISTS turn_audit_no_{op.lower()} BEFORE {op} ON turn_audit "
                   "BEGIN SELECT RAISE(ABORT, 'turn_audit rows are append-only'); END")
    db.execute(
        "CREATE TABLE IF NOT EXISTS steer_queue (steer_id INTEGER PRIMARY KEY AUTOINCREMENT, "
        "session_id TEXT NOT NULL, turn_id TEXT NOT NULL, text TEXT NOT NULL, owner TEXT, accepted_at TEXT NOT NULL)")
    db.execute("CREATE INDEX IF NOT EXISTS steer_queue_by_turn ON steer_queue (turn_id, steer_id)")


def m003_steer_handed_back(db: sqlite_utils.Database) -> None:
    """A steer handed back at its turn's end stays queued, marked with that turn's id, until
    its caller re-sends it (the admission deletes it) or dismisses it."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(steer_queue)").fetchall()}
    if "handed_back" not in columns:
        db.execute("ALTER TABLE steer_queue ADD COLUMN handed_back TEXT")


def m004_idempotency_keys(db: sqlite_utils.Database) -> None:
    """A client's idempotency key, committed with the admission it made: a retry finds the turn."""
    db.execute("CREATE TABLE IF NOT EXISTS idempotency_keys (key TEXT PRIMARY KEY, turn_id TEXT NOT NULL, "
               "session_id TEXT NOT NULL, fingerprint TEXT NOT NULL, caller_ref TEXT NOT NULL DEFAULT '', "
               "created_at TEXT NOT NULL)")
    db.execute("CREATE INDEX IF NOT EXISTS idempotency_keys_by_session ON idempotency_keys (session_id)")


def m005_transcript_rewrites(db: sqlite_utils.Database) -> None:
    """`sessions.rewrites` counts the changes to a transcript that are not appends: a deleted
    row, or a row inserted below a later one. The database keeps it (triggers), so a reader
    holding a session's rows knows, from any process's writes, whether reading only the rows
    after its last seq is enough (transcript_cache)."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(sessions)").fetchall()}
    if "rewrites" not in columns:
        db.execute("ALTER TABLE sessions ADD COLUMN rewrites INTEGER NOT NULL DEFAULT 0")
    db.execute("CREATE TRIGGER IF NOT EXISTS transcript_delete_is_a_rewrite AFTER DELETE ON transcript "
               "BEGIN UPDATE sessions SET rewrites = rewrites + 1 WHERE id = OLD.session_id; END")
    db.execute("CREATE TRIGGER IF NOT EXISTS transcript_insert_below_is_a_rewrite AFTER INSERT ON transcript "
               "WHEN EXISTS (SELECT 1 FROM transcript WHERE session_id = NEW.session_id AND seq > NEW.seq) "
               "BEGIN UPDATE sessions SET rewrites = rewrites + 1 WHERE id = NEW.session_id; END")


def m006_transcript_search(db: sqlite_utils.Database) -> None:
    """Full-text search over what was said (user and reply rows): an FTS5 index over the
    transcript's own rows (external content, no second copy of the text), kept in step by
    triggers; rows from before this migration are indexed once here."""
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS transcript_fts USING fts5(text, content='transcript', "
               "content_rowid='rowid', tokenize='unicode61 remove_diacritics 2')")
    said = "('user', 'assistant_reply')"
    db.execute(f"CREATE TRIGGER IF NOT EXISTS transcript_fts_insert AFTER INSERT ON transcript "
               f"WHEN NEW.kind IN {said} "
               "BEGIN INSERT INTO transcript_fts(rowid, text) VALUES (NEW.rowid, NEW.text); END")
    db.execute(f"CREATE TRIGGER IF NOT EXISTS transcript_fts_delete AFTER DELETE ON transcript "
               f"WHEN OLD.kind IN {said} "
               "BEGIN INSERT INTO transcript_fts(transcript_fts, rowid, text) VALUES ('delete', OLD.rowid, OLD.text); END")
    # idempotent: a step cut off halfway runs again from an empty index
    db.execute("INSERT INTO transcript_fts(transcript_fts) VALUES ('delete-all')")
    db.execute(f"INSERT INTO transcript_fts(rowid, text) SELECT rowid, text FROM transcript WHERE kind IN {said}")


def m007_parked_turns(db: sqlite_utils.Database) -> None:
    """A turn whose process died while it waited on a durable approval is `parked` (live:
    it resumes from the answer), then `resumed` (final). SQLite cannot change a CHECK in
    place, so the ledger table is rebuilt with its rows, indexes and freeze trigger, in one
    transaction (a crash leaves the old table or the new one, never half of each)."""
    from atomic_agent.storage.sqlite_transaction import transaction

    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'turns'").fetchone()
    if row is None or "'parked'" in str(row[0]):
        return
    with transaction(db.conn):
        db.execute("DROP TABLE IF EXISTS turns_next")
        db.execute(_turns_table("turns_next", ("queued", "running", "parked"), TERMINAL_TURN_STATES))
        db.execute("INSERT INTO turns_next SELECT turn_id, session_id, lane, admitted_order, state, origin, text, "
                   "generation, turn_index, reason, category, response_hash, merged_into, owner, admitted_at, "
                   "started_at, finished_at FROM turns")
        db.execute("DROP TABLE turns")  # its indexes and trigger go with it
        db.execute("ALTER TABLE turns_next RENAME TO turns")
        _turns_indexes_and_freeze(db, TERMINAL_TURN_STATES)


MIGRATIONS: list[Migration] = [m001_initial, m002_turn_ledger, m003_steer_handed_back, m004_idempotency_keys,
                               m005_transcript_rewrites, m006_transcript_search, m007_parked_turns]
