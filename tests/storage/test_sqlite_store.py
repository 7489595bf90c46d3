"""SqliteStore, the one open/migrate/write/query every plugin state file goes through: each
way a file cannot be used becomes the store's own error (or the SQLite error as it is when
the store says nothing), and a refused file is left byte for byte as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.api import SqliteStore


def m001_items(db) -> None:  # type: ignore[no-untyped-def]
    with SqliteStore.transaction(db.conn):
        db.conn.execute("CREATE TABLE IF NOT EXISTS items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")


class PlainStore(SqliteStore):
    migrations = [m001_items]
    busy_timeout_s = 0.1


class ItemStoreError(RuntimeError):
    pass


class ItemStore(PlainStore):
    def refuse_locked(self, exc: sqlite3.DatabaseError, *, writing: bool) -> Exception:
        return ItemStoreError(f"{self.path} locked ({'writing' if writing else 'opening'})")

    def refuse_unreadable(self, exc: sqlite3.DatabaseError) -> Exception:
        return ItemStoreError(f"{self.path} is not an item database")

    def refuse_newer(self, newer: str) -> Exception:
        return ItemStoreError(f"{self.path} is newer: {newer}")


def test_writes_commit_and_queries_return_rows_by_column(tmp_path: Path) -> None:
    store = ItemStore.open(tmp_path / "deep" / "items.sqlite")
    with store.write() as conn:
        conn.execute("INSERT INTO items (name) VALUES ('a'), ('b')")
    assert store.query("SELECT id, name FROM items ORDER BY id") == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    store.close()
    store.close()  # closing twice is harmless
    again = ItemStore.open(tmp_path / "deep" / "items.sqlite")
    assert again.query("SELECT count(*) AS n FROM items") == [{"n": 2}]
    again.close()


def test_a_held_write_lock_becomes_the_stores_error_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "items.sqlite"
    own, plain = ItemStore.open(path), PlainStore.open(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ItemStoreError, match="locked \\(writing\\)"), own.write() as conn:
            conn.execute("INSERT INTO items (name) VALUES ('lost')")
        with pytest.raises(sqlite3.OperationalError, match="locked"), plain.write() as conn:  # no refusal: as it is
            conn.execute("INSERT INTO items (name) VALUES ('lost')")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert own.query("SELECT name FROM items") == []
    own.close()
    plain.close()


def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "items.sqlite"
    path.write_bytes(b"not a database, just text that is long enough to have a header" * 20)
    before = path.read_bytes()
    with pytest.raises(ItemStoreError, match="not an item database"):
        ItemStore.open(path)
    with pytest.raises(sqlite3.DatabaseError):
        PlainStore.open(path)
    assert path.read_bytes() == before


def test_a_newer_file_is_refused_untouched_in_the_stores_words_or_the_cores(tmp_path: Path) -> None:
    from atomic_agent.storage.sqlite_migrations import NewerSchemaError

    path = tmp_path / "items.sqlite"
    ItemStore.open(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 9")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(ItemStoreError, match="newer: schema version 9"):
        ItemStore.open(path)
    with pytest.raises(NewerSchemaError, match="schema version 9"):
        PlainStore.open(path)
    assert path.read_bytes() == before


class SharedStore(SqliteStore):
    migrations = [m001_items]  # the default busy timeout (5 s), as the runtime's stores have


def _open_together(path: Path, count: int) -> list[BaseException]:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    start, errors = ctx.Barrier(count), ctx.Queue()

    def opener() -> None:
        start.wait()
        try:
            SharedStore(path).conn.close()
        except BaseException as exc:  # reported to the parent, which asserts there were none
            errors.put(repr(exc))

    procs = [ctx.Process(target=opener) for _ in range(count)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(30)
    found = []
    while not errors.empty():
        found.append(errors.get())
    return found


def test_processes_that_create_one_new_file_together_all_open_it(tmp_path: Path) -> None:
    """Two runtimes started at once on a new state dir both create its files: SQLite answers
    some steps of that race "locked" without waiting (a chaos seed caught it on
    approvals.sqlite); every opener must still get the migrated file."""
    failures = [err for n in range(12) for err in _open_together(tmp_path / f"new-{n}.sqlite", 6)]
    assert failures == []
    assert all(read_version(tmp_path / f"new-{n}.sqlite") for n in range(12))


def read_version(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
