"""The PostgreSQL schema of the shared session state, as numbered steps never renamed or
reordered, and the runner that applies them.

Each step is idempotent (IF NOT EXISTS, OR REPLACE) and runs in its own transaction with its
`atomic_agent_migrations` row. The runner holds a session-level advisory lock for the whole
run, so two processes starting at once apply each step once. A database whose recorded steps
include one this build does not know was migrated by a newer build: it is refused before
anything is written, with the build that wrote it named.

The same facts the SQLite schema keeps in triggers are kept here in the database too: the
transcript refuses in-place updates, the audit refuses updates and deletes, a finalized turn
is frozen, and `sessions.rewrites` counts every change to a transcript that is not an append.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

MIGRATIONS_TABLE = "atomic_agent_migrations"
MIGRATION_LOCK = 0x61746F6D  # pg_advisory_lock key of the runner ("atom")
TERMINAL = "'completed', 'failed', 'stopped', 'cancelled', 'interrupted', 'merged'"
SAID = "('user', 'assistant_reply')"  # the rows search reads (what was said)


@attrs.frozen
class Step:
    name: str
    statements: tuple[str, ...]


M001_SESSIONS = Step("m001_sessions", (
    "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT, "
    "working_dir TEXT NOT NULL, status TEXT, title TEXT, loaded_tools TEXT, known_facts TEXT, "
    "rewrites BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS transcript (session_id TEXT NOT NULL, seq BIGINT NOT NULL, turn_index BIGINT, "
    "kind TEXT, text TEXT, tool TEXT, args TEXT, status TEXT, reason TEXT, reasoning TEXT, details TEXT, "
    "step BIGINT, batch_index BIGINT, created_at TEXT, PRIMARY KEY (session_id, seq))",
    # append-only: the database itself refuses to rewrite a transcript row
    "CREATE OR REPLACE FUNCTION transcript_no_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'transcript rows are append-only'; END $$",
    "CREATE OR REPLACE TRIGGER transcript_no_update BEFORE UPDATE ON transcript "
    "FOR EACH ROW EXECUTE FUNCTION transcript_no_update()",
    # a delete, or an insert below a later row, is a rewrite: readers holding the rows reload them
    "CREATE OR REPLACE FUNCTION transcript_delete_is_a_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "UPDATE sessions SET rewrites = rewrites + 1 WHERE id = OLD.session_id; RETURN OLD; END $$",
    "CREATE OR REPLACE TRIGGER transcript_delete_is_a_rewrite AFTER DELETE ON transcript "
    "FOR EACH ROW EXECUTE FUNCTION transcript_delete_is_a_rewrite()",
    "CREATE OR REPLACE FUNCTION transcript_insert_below_is_a_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$ "
    "BEGIN IF EXISTS (SELECT 1 FROM transcript WHERE session_id = NEW.session_id AND seq > NEW.seq) THEN "
    "UPDATE sessions SET rewrites = rewrites + 1 WHERE id = NEW.session_id; END IF; RETURN NEW; END $$",
    "CREATE OR REPLACE TRIGGER transcript_insert_below_is_a_rewrite AFTER INSERT ON transcript "
    "FOR EACH ROW EXECUTE FUNCTION transcript_insert_below_is_a_rewrite()",
    # full-text search over what was said, without a second copy of the text
    f"CREATE INDEX IF NOT EXISTS transcript_said_fts ON transcript USING gin (to_tsvector('simple', "
    f"coalesce(text, ''))) WHERE kind IN {SAID}",
))

M002_TURN_LEDGER = Step("m002_turn_ledger", (
    # admission order: a sequence never hands a number out twice, across processes and restarts
    "CREATE SEQUENCE IF NOT EXISTS turn_admission_order",
    "CREATE TABLE IF NOT EXISTS turns (turn_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, lane TEXT NOT NULL, "
    "admitted_order BIGINT NOT NULL UNIQUE, state TEXT NOT NULL CHECK (state IN ('queued', 'running', "
    f"{TERMINAL})), origin TEXT NOT NULL, text TEXT NOT NULL, generation BIGINT NOT NULL DEFAULT 0, "
    "turn_index BIGINT, reason TEXT, category TEXT, response_hash TEXT, merged_into TEXT, owner TEXT, "
    "admitted_at TEXT NOT NULL, started_at TEXT, finished_at TEXT)",
    "CREATE INDEX IF NOT EXISTS turns_by_lane ON turns (lane, state, admitted_order)",
    "CREATE INDEX IF NOT EXISTS turns_by_state ON turns (state, admitted_order)",
    "CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, admitted_order)",
    # a finalized turn is a frozen fact: no stale writer moves it again or rewrites its hash
    "CREATE OR REPLACE FUNCTION turns_final_is_frozen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"IF OLD.state IN ({TERMINAL}) THEN RAISE EXCEPTION 'a finalized turn cannot change'; END IF; "
    "RETURN NEW; END $$",
    "CREATE OR REPLACE TRIGGER turns_final_is_frozen BEFORE UPDATE ON turns "
    "FOR EACH ROW EXECUTE FUNCTION turns_final_is_frozen()",
    "CREATE TABLE IF NOT EXISTS turn_audit (audit_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "turn_id TEXT NOT NULL, session_id TEXT NOT NULL, lane TEXT NOT NULL, from_state TEXT, to_state TEXT NOT NULL, "
    "generation BIGINT NOT NULL, reason TEXT, owner TEXT, at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS turn_audit_by_turn ON turn_audit (turn_id, audit_id)",
    # the audit is the independent record invariants are checked against: never rewritten
    "CREATE OR REPLACE FUNCTION turn_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'turn_audit rows are append-only'; END $$",
    "CREATE OR REPLACE TRIGGER turn_audit_no_update BEFORE UPDATE OR DELETE ON turn_audit "
    "FOR EACH ROW EXECUTE FUNCTION turn_audit_append_only()",
    "CREATE OR REPLACE TRIGGER turn_audit_no_truncate BEFORE TRUNCATE ON turn_audit "
    "FOR EACH STATEMENT EXECUTE FUNCTION turn_audit_append_only()",
    # steer ids come from an identity: never reused, not after a delete, a restart or in another process
    "CREATE TABLE IF NOT EXISTS steer_queue (steer_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "session_id TEXT NOT NULL, turn_id TEXT NOT NULL, text TEXT NOT NULL, owner TEXT, accepted_at TEXT NOT NULL, "
    "handed_back TEXT)",
    "CREATE INDEX IF NOT EXISTS steer_queue_by_turn ON steer_queue (turn_id, steer_id)",
    "CREATE TABLE IF NOT EXISTS idempotency_keys (key TEXT PRIMARY KEY, turn_id TEXT NOT NULL, "
    "session_id TEXT NOT NULL, fingerprint TEXT NOT NULL, caller_ref TEXT NOT NULL DEFAULT '', "
    "created_at TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS idempotency_keys_by_session ON idempotency_keys (session_id)",
    "CREATE INDEX IF NOT EXISTS idempotency_keys_by_ref ON idempotency_keys (caller_ref)",
))

# a turn whose dead process waited on a durable approval is parked (live), and resumed (final)
# once the answer was acted on; a resumed turn is as frozen as any other final one
M003_PARKED_TURNS = Step("m003_parked_turns", (
    "ALTER TABLE turns DROP CONSTRAINT IF EXISTS turns_state_check",
    f"ALTER TABLE turns ADD CONSTRAINT turns_state_check CHECK (state IN ('queued', 'running', 'parked', {TERMINAL}, "
    "'resumed'))",
    "CREATE OR REPLACE FUNCTION turns_final_is_frozen() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    f"IF OLD.state IN ({TERMINAL}, 'resumed') THEN RAISE EXCEPTION 'a finalized turn cannot change'; END IF; "
    "RETURN NEW; END $$",
))

M004_FLEET_HOSTS = Step("m004_fleet_hosts", (
    # every host's config fingerprint (fleet_config): two fleets with different configs on one database are told apart
    "CREATE TABLE IF NOT EXISTS fleet_hosts (member TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, "
    "seen_at TIMESTAMPTZ NOT NULL DEFAULT now())",
))

M005_APPROVALS = Step("m005_approvals", (
    # the embedded approvals.sqlite's columns; times are epoch seconds, but every expiry is decided
    # by the database's clock (pg_approval_records), so no host's clock can lengthen or cut one
    "CREATE TABLE IF NOT EXISTS approval_records (id TEXT PRIMARY KEY, kind TEXT NOT NULL, "
    "session_id TEXT NOT NULL, turn_id TEXT, call_key TEXT, category TEXT NOT NULL, level INTEGER NOT NULL, "
    "summary TEXT NOT NULL, frozen TEXT NOT NULL, fingerprint TEXT NOT NULL, answerers TEXT NOT NULL, "
    "created_at DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, "
    "decision TEXT, answer_text TEXT, answered_by TEXT, surface TEXT, answered_at DOUBLE PRECISION, "
    "used_at DOUBLE PRECISION, question TEXT, schema INTEGER NOT NULL)",
    "CREATE INDEX IF NOT EXISTS approval_records_state ON approval_records (state, created_at)",
    "CREATE INDEX IF NOT EXISTS approval_records_call ON approval_records (call_key)",
    # who decided what: one JSON line per decision, ids from an identity (never reused), and never
    # rewritten: the database refuses UPDATE, DELETE and TRUNCATE, whoever connects
    "CREATE TABLE IF NOT EXISTS approval_audit (audit_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
    "at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(), entry TEXT NOT NULL)",
    "CREATE OR REPLACE FUNCTION approval_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "RAISE EXCEPTION 'approval_audit rows are append-only'; END $$",
    "CREATE OR REPLACE TRIGGER approval_audit_no_update BEFORE UPDATE OR DELETE ON approval_audit "
    "FOR EACH ROW EXECUTE FUNCTION approval_audit_append_only()",
    "CREATE OR REPLACE TRIGGER approval_audit_no_truncate BEFORE TRUNCATE ON approval_audit "
    "FOR EACH STATEMENT EXECUTE FUNCTION approval_audit_append_only()",
))

M006_APPROVAL_NOTICES = Step("m006_approval_notices", (
    # a record that stops being pending is announced (approval_notices): waiters on every host
    # wake at once instead of reading their record every 0.1 s; the notice goes out on commit
    "CREATE OR REPLACE FUNCTION approval_records_notify_settled() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
    "PERFORM pg_notify('atomic_agent_approvals', NEW.id); RETURN NULL; END $$",
    "CREATE OR REPLACE TRIGGER approval_records_settled AFTER UPDATE OF state ON approval_records FOR EACH ROW "
    "WHEN (OLD.state = 'pending' AND NEW.state <> 'pending') EXECUTE FUNCTION approval_records_notify_settled()",
))

STEPS: tuple[Step, ...] = (M001_SESSIONS, M002_TURN_LEDGER, M003_PARKED_TURNS, M004_FLEET_HOSTS, M005_APPROVALS,
                           M006_APPROVAL_NOTICES)


class NewerDatabaseError(RuntimeError):
    """The database was migrated by a newer build; nothing was written to it."""


def in_namespace(name: str, owner: str) -> bool:
    """Whether step `name` belongs to `owner`: the core's steps have no dot, a plugin's
    (shared_database.ensure_schema) are named `<plugin>.<step>`."""
    return name.startswith(owner + ".") if owner else "." not in name


@attrs.frozen
class SchemaStatus:
    applied: tuple[str, ...]  # step names recorded in the database, in the order applied
    writer: str | None  # the build that applied the newest step

    def unknown(self, steps: Sequence[Step] = STEPS, owner: str = "") -> list[str]:
        known = {s.name for s in steps}
        return [name for name in self.applied if in_namespace(name, owner) and name not in known]

    def pending(self, steps: Sequence[Step] = STEPS) -> list[str]:
        return [s.name for s in steps if s.name not in self.applied]


def this_build() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("atomic-agent")
    except PackageNotFoundError:
        return "unknown"


def read_schema_status(conn: Any) -> SchemaStatus:
    """What the database says about its schema (read-only; empty for a fresh database)."""
    exists = conn.execute("SELECT to_regclass(%s)", [MIGRATIONS_TABLE]).fetchone()[0]
    if exists is None:
        return SchemaStatus((), None)
    rows = conn.execute(f"SELECT name, build FROM {MIGRATIONS_TABLE} ORDER BY applied_at, name").fetchall()
    return SchemaStatus(tuple(r[0] for r in rows), rows[-1][1] if rows else None)


def refusal(status: SchemaStatus, shown: str, steps: Sequence[Step] = STEPS, owner: str = "") -> NewerDatabaseError | None:
    unknown = status.unknown(steps, owner)
    if not unknown:
        return None
    whose = f"the {owner} plugin's " if owner else ""
    return NewerDatabaseError(
        f"the PostgreSQL database {shown} was migrated by a newer atomic-agent ({status.writer or 'unknown build'}: "
        f"{whose}steps {', '.join(unknown)} are unknown to this build {this_build()}); it was left untouched. Upgrade "
        "atomic-agent on this host to that build or later (every process sharing the database must run it), or "
        "point storage.url at another database")


def migrate(conn: Any, shown: str, steps: Sequence[Step] = STEPS, owner: str = "") -> list[str]:
    """Apply every step of `owner` ("" for the core's) not yet recorded, under the advisory
    lock; the names applied now. `conn` is an autocommit psycopg connection.
    NewerDatabaseError before any write when the database knows a step of `owner` this build
    does not."""
    conn.execute("SELECT pg_advisory_lock(%s)", [MIGRATION_LOCK])
    try:
        status = read_schema_status(conn)
        refused = refusal(status, shown, steps, owner)
        if refused is not None:
            raise refused
        ran: list[str] = []
        if not status.pending(steps):
            return ran
        build = this_build()
        with conn.transaction():
            conn.execute(f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, "
                         "build TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp())")
        for step in steps:
            if step.name in status.applied:
                continue
            with conn.transaction():
                for statement in step.statements:
                    conn.execute(statement)
                conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, build) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                             [step.name, build])
            ran.append(step.name)
        return ran
    finally:
        if not conn.broken:  # a lost connection released the lock with its session
            conn.execute("SELECT pg_advisory_unlock(%s)", [MIGRATION_LOCK])
