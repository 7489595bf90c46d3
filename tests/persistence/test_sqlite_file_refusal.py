"""SqliteStore and the files it opens: a corrupt, truncated, damaged, newer or foreign file is
refused with a clear message and left untouched; migrations are recorded and idempotent; the
database itself refuses to rewrite a record."""

from __future__ import annotations

import hashlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from atomic_agent.persistence.persistence_errors import StoreRefusedError
from atomic_agent.persistence.sqlite_schema import APPLICATION_ID, SCHEMA_VERSION
from atomic_agent.persistence.sqlite_store import SqliteStore


def _fingerprint(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


async def test_corrupt_file_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    path.write_bytes(b"not a database at all\n" * 50)
    before = _fingerprint(tmp_path)
    with pytest.raises(StoreRefusedError, match="not a SQLite database.*left untouched.*Move the file aside"):
        SqliteStore.open(path)
    assert _fingerprint(tmp_path) == before


async def test_truncated_store_file_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    (await _closed_store_with_data(path))
    path.write_bytes(path.read_bytes()[:60])
    before = _fingerprint(tmp_path)
    with pytest.raises(StoreRefusedError, match="left untouched"):
        SqliteStore.open(path)
    assert _fingerprint(tmp_path) == before


async def test_damaged_pages_are_reported_as_damage_not_as_a_crash(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    await _closed_store_with_data(path, rows=400)
    data = bytearray(path.read_bytes())
    page = 4096
    for offset in range(page * 2, len(data)):  # keep the header and the schema page, wreck the rest
        data[offset] = 0xA5
    path.write_bytes(bytes(data))
    with pytest.raises(StoreRefusedError, match="damaged|not a usable|malformed"):
        store = SqliteStore.open(path)
        try:
            await store.read("s")
            async with store.transaction() as tx:
                await tx.append("s", "more")
        finally:
            await store.close()


async def _closed_store_with_data(path: Path, rows: int = 3) -> None:
    store = SqliteStore.open(path)
    async with store.transaction() as tx:
        for i in range(rows):
            await tx.append("s", {"i": i, "pad": "x" * 200})
            await tx.put(f"k.{i:04d}", "v" * 100)
    await store.close()


async def test_newer_schema_file_is_refused_and_left_untouched(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    await _closed_store_with_data(path)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = _fingerprint(tmp_path)
    with pytest.raises(StoreRefusedError, match=r"newer atomic-agent.*version 2.*left untouched.*Upgrade"):
        SqliteStore.open(path)
    assert _fingerprint(tmp_path) == before


async def test_unknown_migrations_are_refused_and_the_file_keeps_its_bytes(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    await _closed_store_with_data(path)
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO store_migrations VALUES ('m099_from_the_future', 'x')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreRefusedError, match="m099_from_the_future.*unknown"):
        SqliteStore.open(path)
    assert path.read_bytes() == before


async def test_another_programs_database_is_refused(tmp_path: Path):
    path = tmp_path / "other.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    before = _fingerprint(tmp_path)
    with pytest.raises(StoreRefusedError, match="invoices.*not an atomic-agent store"):
        SqliteStore.open(path)
    assert _fingerprint(tmp_path) == before
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 12345")
    conn.close()
    with pytest.raises(StoreRefusedError, match="another program"):
        SqliteStore.open(path)


async def test_migrations_are_recorded_once_and_reopening_is_idempotent(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    for _ in range(3):
        await (SqliteStore.open(path)).close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT name FROM store_migrations").fetchall() == [("m001_streams_and_kv",)]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger')")}
    assert {"store_streams", "store_records", "store_kv", "store_records_append_only",
            "store_streams_monotonic"} <= tables
    conn.close()


async def test_a_half_applied_migration_is_completed_on_the_next_open(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    await (SqliteStore.open(path)).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DELETE FROM store_migrations")  # as if the process died before recording the step
    conn.execute("DROP TRIGGER store_records_append_only")
    conn.close()
    store = SqliteStore.open(path)
    await store.close()
    conn = sqlite3.connect(path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "store_records_append_only" in names
    assert conn.execute("SELECT count(*) FROM store_migrations").fetchone()[0] == 1
    conn.close()


async def test_records_table_refuses_updates_at_the_database_level(tmp_path: Path):
    store = SqliteStore.open(tmp_path / "store.sqlite")
    async with store.transaction() as tx:
        await tx.append("s", "original")
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE store_records SET body = '\"forged\"'")
    with pytest.raises(sqlite3.IntegrityError, match="never goes backwards"):
        conn.execute("UPDATE store_streams SET last_seq = 0")
    conn.close()
    assert [r.value for r in await store.read("s")] == ["original"]
    await store.close()


async def test_a_newer_schema_only_in_a_leftover_wal_is_refused_without_checkpointing_it(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    await _closed_store_with_data(path)
    newer = (f"import os, sqlite3; c = sqlite3.connect({str(path)!r}, isolation_level=None); "
             f"c.execute('PRAGMA wal_autocheckpoint = 0'); c.execute('PRAGMA user_version = {SCHEMA_VERSION + 1}'); "
             "os._exit(0)")  # dies before any checkpoint: the new version lives only in the WAL
    subprocess.run([sys.executable, "-c", newer], check=True)
    assert path.with_name("store.sqlite-wal").stat().st_size > 0
    before = path.read_bytes()
    with pytest.raises(StoreRefusedError, match="newer atomic-agent.*left untouched"):
        SqliteStore.open(path)
    assert path.read_bytes() == before
