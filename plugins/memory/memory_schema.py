"""Migrations of memory.sqlite: functions named m00N_..., never renamed or reordered, each
idempotent (it checks what exists before changing it); storage.sqlite_migrations applies
them and keeps `PRAGMA user_version` so a newer file is refused untouched."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import SqliteStore, sqlite_migrations

if TYPE_CHECKING:  # the steps receive a Database; the module loads without sqlite-utils
    import sqlite_utils

FTS_TOKENIZER = "porter unicode61"
NOTE_FTS_COLUMNS = ("content", "tags", "context")

_PROFILE_DDL = """
CREATE TABLE IF NOT EXISTS profile_facts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  pinned INTEGER NOT NULL DEFAULT 1,
  keywords TEXT NOT NULL DEFAULT '[]',
  source TEXT NOT NULL DEFAULT 'tool',
  valid_from INTEGER NOT NULL,
  superseded_by INTEGER,
  supersedes INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)"""
# the storage-level guard for "at most one active row per key"
_PROFILE_INDEXES = (
    "CREATE UNIQUE INDEX IF NOT EXISTS idx_profile_active_key ON profile_facts(key) WHERE superseded_by IS NULL",
    "CREATE INDEX IF NOT EXISTS idx_profile_history ON profile_facts(key, valid_from, id)",
)


def _columns(db: sqlite_utils.Database, table: str) -> set[str]:
    return {c.name for c in db[table].columns} if db[table].exists() else set()


def m001_profile_facts(db: sqlite_utils.Database) -> None:
    """Bi-temporal profile facts. A legacy key-primary-key table (one row per key, from the
    earlier system) is converted: every row becomes an active row with valid_from = updated_at."""
    legacy = db["profile_facts"].exists() and "id" not in _columns(db, "profile_facts")
    with SqliteStore.transaction(db.conn):
        if legacy:
            db.execute("ALTER TABLE profile_facts RENAME TO profile_facts_legacy")
        db.execute(_PROFILE_DDL)
        if legacy or db["profile_facts_legacy"].exists():
            cols = _columns(db, "profile_facts_legacy")
            pinned = "COALESCE(pinned, 1)" if "pinned" in cols else "1"
            keywords = "COALESCE(keywords, '[]')" if "keywords" in cols else "'[]'"
            db.execute(
                "INSERT INTO profile_facts (key, value, pinned, keywords, source, valid_from, superseded_by, "
                f"supersedes, created_at, updated_at) SELECT key, value, {pinned}, {keywords}, 'legacy', "
                "updated_at, NULL, NULL, updated_at, updated_at FROM profile_facts_legacy ORDER BY updated_at, key")
            db.execute("DROP TABLE profile_facts_legacy")
        for ddl in _PROFILE_INDEXES:
            db.execute(ddl)


_NOTE_COLUMNS: dict[str, str] = {
    "context": "TEXT NOT NULL DEFAULT ''",
    "session_id": "TEXT",
    "meta": "TEXT",
}


def m002_memories(db: sqlite_utils.Database) -> None:
    """Notes plus their FTS5 index (external content, kept in sync by triggers). A legacy
    `memories` table gains the newer columns and has its index rebuilt."""
    with SqliteStore.transaction(db.conn):
        db.execute("""
            CREATE TABLE IF NOT EXISTS memories (
              id INTEGER PRIMARY KEY AUTOINCREMENT,
              content TEXT NOT NULL,
              tags TEXT NOT NULL DEFAULT '[]',
              context TEXT NOT NULL DEFAULT '',
              source TEXT NOT NULL DEFAULT 'tool',
              scope TEXT NOT NULL DEFAULT 'global',
              working_dir TEXT,
              session_id TEXT,
              meta TEXT,
              created_at INTEGER NOT NULL,
              updated_at INTEGER NOT NULL
            )""")
        have = _columns(db, "memories")
        for name, ddl in _NOTE_COLUMNS.items():
            if name not in have:
                db.execute(f"ALTER TABLE memories ADD COLUMN {name} {ddl}")
        db.execute("CREATE INDEX IF NOT EXISTS idx_memories_fifo ON memories(updated_at, id)")
    # sqlite-utils compares the existing index with the wanted one and rebuilds only on a difference
    db.table("memories").enable_fts(list(NOTE_FTS_COLUMNS), fts_version="FTS5", create_triggers=True,
                                    tokenize=FTS_TOKENIZER, replace=True)


def m003_memory_embeddings(db: sqlite_utils.Database) -> None:
    """One vector per (note, embedding model), raw little-endian float32. The foreign key
    cascades: forgetting or evicting a note removes its vectors in the same transaction.
    Empty unless the memory_embeddings plugin is on."""
    with SqliteStore.transaction(db.conn):
        db.execute("""
            CREATE TABLE IF NOT EXISTS memory_embeddings (
              memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
              model TEXT NOT NULL,
              dim INTEGER NOT NULL,
              embedding BLOB NOT NULL,
              created_at INTEGER NOT NULL,
              PRIMARY KEY (memory_id, model)
            )""")
        db.execute("CREATE INDEX IF NOT EXISTS idx_memory_embeddings_model ON memory_embeddings(model, memory_id)")


_LINKS_DDL = """
CREATE TABLE IF NOT EXISTS memory_links (
  from_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  to_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  weight REAL NOT NULL DEFAULT 1.0,
  source TEXT NOT NULL DEFAULT 'link_generator',
  created_at INTEGER NOT NULL,
  PRIMARY KEY (from_id, to_id, kind),
  CHECK (from_id <> to_id)
)"""
_LINK_INDEXES = (
    "CREATE INDEX IF NOT EXISTS idx_memory_links_to ON memory_links(to_id)",
    "CREATE INDEX IF NOT EXISTS idx_memory_links_kind ON memory_links(kind)",
)


def m004_memory_links(db: sqlite_utils.Database) -> None:
    """The typed link graph between notes (cascading on either endpoint, no self-loops) and
    the notes' `consolidating_at` lease stamp, which the neighbour evolver honours and the
    consolidator takes."""
    with SqliteStore.transaction(db.conn):
        db.execute(_LINKS_DDL)
        for ddl in _LINK_INDEXES:
            db.execute(ddl)
        if "consolidating_at" not in _columns(db, "memories"):
            db.execute("ALTER TABLE memories ADD COLUMN consolidating_at INTEGER")


_LESSONS_DDL = """
CREATE TABLE IF NOT EXISTS lessons (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trigger TEXT NOT NULL,
  advice TEXT NOT NULL,
  tags TEXT NOT NULL DEFAULT '[]',
  evidence TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'candidate'
    CHECK (status IN ('candidate', 'active', 'deprecated', 'superseded')),
  success_count INTEGER NOT NULL DEFAULT 0,
  failure_count INTEGER NOT NULL DEFAULT 0,
  vote_score REAL NOT NULL DEFAULT 0,
  source TEXT NOT NULL DEFAULT 'reflection',
  working_dir TEXT,
  superseded_by INTEGER REFERENCES lessons(id),
  status_reason TEXT,
  valid_from INTEGER NOT NULL,
  valid_to INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)"""
_LESSON_VOTES_DDL = """
CREATE TABLE IF NOT EXISTS lesson_votes (
  lesson_id INTEGER NOT NULL REFERENCES lessons(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL,
  turn_index INTEGER NOT NULL,
  vote INTEGER NOT NULL CHECK (vote IN (-1, 1)),
  created_at INTEGER NOT NULL,
  PRIMARY KEY (lesson_id, session_id, turn_index)
)"""


def m005_lessons(db: sqlite_utils.Database) -> None:
    """Lessons (trigger, advice, evidence note ids) with a bi-temporal lifecycle (candidate,
    active, deprecated, superseded: valid_from/valid_to, the row is never deleted), their FTS5
    index, one vote per (lesson, session, turn) so a replayed session cannot vote twice, and the
    notes' `consolidated_into` (a note folded into a lesson leaves the index, stays readable)."""
    with SqliteStore.transaction(db.conn):
        db.execute(_LESSONS_DDL)
        db.execute(_LESSON_VOTES_DDL)
        db.execute("CREATE INDEX IF NOT EXISTS idx_lessons_status ON lessons(status, vote_score, updated_at, id)")
        if "consolidated_into" not in _columns(db, "memories"):
            db.execute("ALTER TABLE memories ADD COLUMN consolidated_into INTEGER")
    db.table("lessons").enable_fts(["trigger", "advice", "tags"], fts_version="FTS5", create_triggers=True,
                                   tokenize=FTS_TOKENIZER, replace=True)


_PROCEDURES_DDL = """
CREATE TABLE IF NOT EXISTS procedures (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  trigger TEXT NOT NULL,
  signature TEXT NOT NULL,
  steps TEXT NOT NULL,
  preconditions TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '[]',
  evidence TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'deprecated')),
  status_reason TEXT,
  use_count INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL DEFAULT 'miner',
  valid_from INTEGER NOT NULL,
  valid_to INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)"""


def m006_procedures(db: sqlite_utils.Database) -> None:
    """Advisory procedure templates (a trigger, ordered steps with tool hints, the evidence
    turns), their FTS5 index, and the successful multi-step turns they are mined from."""
    with SqliteStore.transaction(db.conn):
        db.execute(_PROCEDURES_DDL)
        db.execute("CREATE INDEX IF NOT EXISTS idx_procedures_signature ON procedures(signature, status)")
        db.execute("CREATE TABLE IF NOT EXISTS procedure_runs (session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, "
                   "signature TEXT NOT NULL, request TEXT NOT NULL, steps TEXT NOT NULL, created_at INTEGER NOT NULL, "
                   "PRIMARY KEY (session_id, turn_index))")
        db.execute("CREATE INDEX IF NOT EXISTS idx_procedure_runs_signature ON procedure_runs(signature, created_at)")
    db.table("procedures").enable_fts(["trigger", "steps", "tags"], fts_version="FTS5", create_triggers=True,
                                      tokenize=FTS_TOKENIZER, replace=True)


def m007_lesson_origin(db: sqlite_utils.Database) -> None:
    """Lessons distilled from one troubled turn name it (`origin`, "session#turn"): a replayed
    session distils that turn once (a unique origin). The reflection model's own votes on the
    lessons a turn was shown: one per (lesson, session, turn), apart from the outcome votes."""
    with SqliteStore.transaction(db.conn):
        db.execute("CREATE TABLE IF NOT EXISTS lesson_model_votes (lesson_id INTEGER NOT NULL REFERENCES lessons(id) "
                   "ON DELETE CASCADE, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, "
                   "vote INTEGER NOT NULL CHECK (vote IN (-1, 1)), created_at INTEGER NOT NULL, "
                   "PRIMARY KEY (lesson_id, session_id, turn_index))")
        if "origin" not in _columns(db, "lessons"):
            db.execute("ALTER TABLE lessons ADD COLUMN origin TEXT")
        db.execute("CREATE UNIQUE INDEX IF NOT EXISTS idx_lessons_origin ON lessons(origin) WHERE origin IS NOT NULL")


def m008_recall_votes(db: sqlite_utils.Database) -> None:
    """Votes on recalled notes and shown profile facts (memory v2 phase 7a): a `vote_score` on
    each row (clamped, decayed per consolidation tick), and one vote per (kind, row, session,
    turn) so a replayed session votes once. The note eviction order reads the score first."""
    with SqliteStore.transaction(db.conn):
        for table in ("memories", "profile_facts"):
            if "vote_score" not in _columns(db, table):
                db.execute(f"ALTER TABLE {table} ADD COLUMN vote_score REAL NOT NULL DEFAULT 0")
        db.execute("CREATE TABLE IF NOT EXISTS recall_votes (kind TEXT NOT NULL CHECK (kind IN ('note', 'profile')), "
                   "target_id INTEGER NOT NULL, session_id TEXT NOT NULL, turn_index INTEGER NOT NULL, "
                   "vote INTEGER NOT NULL CHECK (vote IN (-1, 1)), created_at INTEGER NOT NULL, "
                   "PRIMARY KEY (kind, target_id, session_id, turn_index))")
        db.execute("CREATE INDEX IF NOT EXISTS idx_recall_votes_turn ON recall_votes(session_id, turn_index)")
        db.execute("CREATE INDEX IF NOT EXISTS idx_memories_eviction ON memories(vote_score, updated_at, id)")


MIGRATIONS: list[sqlite_migrations.Migration] = [m001_profile_facts, m002_memories, m003_memory_embeddings,
                                 m004_memory_links, m005_lessons, m006_procedures, m007_lesson_origin,
                                 m008_recall_votes]
MEMORY_SCHEMA_VERSION = len(MIGRATIONS)
