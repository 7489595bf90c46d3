"""memory.sqlite migrations: from blank, idempotent, from the earlier system's layout,
and refusal (untouched) of corrupt and newer files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryDatabaseRefusedError
from atomic_agent.plugins.memory.memory_schema import MEMORY_SCHEMA_VERSION
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore


def schema_of(path: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        return sorted(conn.execute("SELECT type, name, COALESCE(sql, '') FROM sqlite_master").fetchall())
    finally:
        conn.close()


def test_blank_file_gets_tables_indexes_fts_and_triggers(tmp_path: Path) -> None:
    MemoryDatabase.open(tmp_path / "m.sqlite").close()
    names = {(t, n) for t, n, _ in schema_of(tmp_path / "m.sqlite")}
    for expected in [("table", "profile_facts"), ("index", "idx_profile_active_key"), ("table", "memories"),
                     ("index", "idx_memories_fifo"), ("table", "memories_fts"), ("trigger", "memories_ai"),
                     ("trigger", "memories_ad"), ("trigger", "memories_au"), ("table", "_migrations")]:
        assert expected in names
    fts_sql = next(sql for t, n, sql in schema_of(tmp_path / "m.sqlite") if n == "memories_fts")
    assert "porter unicode61" in fts_sql
    conn = sqlite3.connect(tmp_path / "m.sqlite")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == MEMORY_SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_migrations_are_idempotent_reopening_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    db = MemoryDatabase.open(path)
    NoteStore(db).store("kept across reopen")
    db.close()
    before = schema_of(path)
    db = MemoryDatabase.open(path)
    assert schema_of(path) == before
    assert [n.content for n in NoteStore(db).all_notes()] == ["kept across reopen"]
    db.close()


def test_legacy_memories_table_gains_new_columns_and_a_rebuilt_index(tmp_path: Path) -> None:
    path = tmp_path / "legacy.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript("""
        CREATE TABLE memories (id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL, tags TEXT NOT NULL,
          source TEXT NOT NULL, scope TEXT NOT NULL, working_dir TEXT, created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL);
        INSERT INTO memories (content, tags, source, scope, created_at, updated_at)
          VALUES ('legacy note about gardening', '["garden"]', 'tool', 'global', 5, 5);
    """)
    conn.close()
    db = MemoryDatabase.open(path)
    hits = NoteStore(db).recall("gardening")
    assert [h.note.content for h in hits] == ["legacy note about gardening"]
    assert hits[0].note.context == ""
    db.close()


def test_newer_schema_file_is_refused_and_left_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    MemoryDatabase.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {MEMORY_SCHEMA_VERSION + 1}")
    conn.execute("INSERT INTO _migrations VALUES ('m099_from_the_future', 'later')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(MemoryDatabaseRefusedError) as caught:
        MemoryDatabase.open(path)
    assert "newer atomic-agent" in str(caught.value) and "m099_from_the_future" in str(caught.value)
    assert "left untouched" in str(caught.value)
    assert path.read_bytes() == before


def test_corrupt_file_is_refused_with_a_clear_message_and_left_byte_identical(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    path.write_bytes(b"this is not an sqlite database, just bytes\n" * 100)
    before = path.read_bytes()
    with pytest.raises(MemoryDatabaseRefusedError) as caught:
        MemoryDatabase.open(path)
    assert "not a usable memory database" in str(caught.value) and "Move it aside" in str(caught.value)
    assert path.read_bytes() == before
    assert not (tmp_path / "m.sqlite-wal").exists()


def test_profile_and_notes_share_one_file(tmp_path: Path) -> None:
    db = MemoryDatabase.open(tmp_path / "m.sqlite")
    ProfileStore(db).set("name", "Alex")
    NoteStore(db).store("a note")
    db.close()
    conn = sqlite3.connect(tmp_path / "m.sqlite")
    assert conn.execute("SELECT count(*) FROM profile_facts").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 1
    conn.close()
