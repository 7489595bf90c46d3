"""core/storage is the one SQLite layer: files open with their durability mode, migrations
are recorded once and re-run safely, a newer file is recognised without writing, and every
store stamps rows from the one clock."""

from __future__ import annotations

import ast
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlite_utils

from atomic_agent.storage import store_clock
from atomic_agent.storage.sqlite_file import Durability, open_sqlite
from atomic_agent.storage.sqlite_migrations import migrate, read_schema_state

REPO = Path(__file__).resolve().parents[2]
SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


@pytest.mark.parametrize("durability", list(Durability))
def test_open_sets_wal_and_the_requested_durability(tmp_path: Path, durability: Durability) -> None:
    conn = open_sqlite(tmp_path / "x.sqlite", durability)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert SYNCHRONOUS[conn.execute("PRAGMA synchronous").fetchone()[0]] == durability.value
        assert conn.isolation_level is None  # transactions are explicit
    finally:
        conn.close()


def test_sessions_commit_with_full_and_memory_with_normal(tmp_path: Path) -> None:
    from atomic_agent.plugins.memory.memory_database import MemoryDatabase
    from atomic_agent.sessions.session_store import SessionStore

    sessions = SessionStore(tmp_path)
    memory = MemoryDatabase.open(tmp_path / "memory.sqlite")
    try:
        assert SYNCHRONOUS[sessions.conn.execute("PRAGMA synchronous").fetchone()[0]] == "FULL"
        assert SYNCHRONOUS[memory.conn.execute("PRAGMA synchronous").fetchone()[0]] == "NORMAL"
    finally:
        sessions.close()
        memory.close()


def test_a_refusing_inspection_leaves_the_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "keep.sqlite"
    sqlite3.connect(path).close()
    before = path.read_bytes()

    def refuse(conn: sqlite3.Connection) -> None:
        raise PermissionError("not this one")

    with pytest.raises(PermissionError):
        open_sqlite(path, Durability.FULL, inspect=refuse)
    assert path.read_bytes() == before and not path.with_name("keep.sqlite-wal").exists()


def m001_things(db: sqlite_utils.Database) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS things (id INTEGER PRIMARY KEY)")


def m002_more(db: sqlite_utils.Database) -> None:
    if "label" not in {c.name for c in db["things"].columns}:
        db.execute("ALTER TABLE things ADD COLUMN label TEXT")


def test_migrations_apply_once_record_their_time_and_set_user_version(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(store_clock, "now_ms", lambda: 1_700_000_000_123)
    db = sqlite_utils.Database(open_sqlite(tmp_path / "m.sqlite", Durability.FULL))
    assert migrate(db.conn, [m001_things, m002_more]) == ["m001_things", "m002_more"]
    assert migrate(db.conn, [m001_things, m002_more]) == []
    rows = db.execute("SELECT name, applied_at FROM _migrations ORDER BY name").fetchall()
    assert rows == [("m001_things", "2023-11-14T22:13:20.123+00:00"), ("m002_more", "2023-11-14T22:13:20.123+00:00")]
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_step_whose_record_was_lost_runs_again_safely(tmp_path: Path) -> None:
    db = sqlite_utils.Database(open_sqlite(tmp_path / "m.sqlite", Durability.FULL))
    migrate(db.conn, [m001_things, m002_more])
    db.execute("DELETE FROM _migrations WHERE name = 'm002_more'")  # a crash between the step and its row
    assert migrate(db.conn, [m001_things, m002_more]) == ["m002_more"]
    assert {c.name for c in db["things"].columns} == {"id", "label"}


def test_a_file_from_a_newer_build_is_recognised_without_writing(tmp_path: Path) -> None:
    db = sqlite_utils.Database(open_sqlite(tmp_path / "m.sqlite", Durability.FULL))
    migrate(db.conn, [m001_things, m002_more])
    schema = read_schema_state(db.conn)
    assert schema.newer_than([m001_things, m002_more]) is None
    newer = schema.newer_than([m001_things])
    assert newer is not None and "m002_more" in newer and "version 2" in newer


def test_an_up_to_date_file_opens_without_loading_sqlite_utils(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    conn = open_sqlite(path, Durability.FULL)
    migrate(conn, [m001_things, m002_more])
    conn.close()
    probe = ("import sys\n"
             "from pathlib import Path\n"
             "from atomic_agent.storage.sqlite_file import Durability, open_sqlite\n"
             "from atomic_agent.storage.sqlite_migrations import migrate\n"
             "def m001_things(db): raise AssertionError('ran again')\n"
             "def m002_more(db): raise AssertionError('ran again')\n"
             "conn = open_sqlite(Path(sys.argv[1]), Durability.FULL)\n"
             "print(migrate(conn, [m001_things, m002_more]), 'sqlite_utils' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["[]", "False"], done.stderr


def test_a_pending_step_still_runs_through_sqlite_utils(tmp_path: Path) -> None:
    conn = open_sqlite(tmp_path / "m.sqlite", Durability.FULL)
    migrate(conn, [m001_things])
    assert migrate(conn, [m001_things, m002_more]) == ["m002_more"]  # the step receives a Database
    assert {row[1] for row in conn.execute("PRAGMA table_info(things)")} == {"id", "label"}
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 2


def test_migrations_run_no_sqlite_utils_plugins(tmp_path: Path) -> None:
    """A plugin of sqlite-utils installed beside us never touches a state file's connection (and
    the migration does not scan the installed distributions to find one)."""
    probe = ("import sys\n"
             "from pathlib import Path\n"
             "from atomic_agent.storage.sqlite_file import Durability, open_sqlite\n"
             "from atomic_agent.storage.sqlite_migrations import migrate\n"
             "def m001_things(db): db.execute('create table things (id integer primary key)')\n"
             "conn = open_sqlite(Path(sys.argv[1]), Durability.FULL)\n"
             "print(migrate(conn, [m001_things]), sys.modules['sqlite_utils.plugins']._plugins_loaded)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "m.sqlite")], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.split() == ["['m001_things']", "False"], done.stderr


def test_stores_keep_recursive_triggers_on(tmp_path: Path) -> None:
    # the stores' triggers were written for sqlite-utils' connections, which switch this on
    assert open_sqlite(tmp_path / "t.sqlite", Durability.NORMAL).execute("PRAGMA recursive_triggers").fetchone()[0] == 1


def test_iso_ms_is_exact_to_the_millisecond() -> None:
    assert store_clock.iso_ms(1_700_000_000_999) == "2023-11-14T22:13:20.999+00:00"
    assert store_clock.iso_ms(0) == "1970-01-01T00:00:00.000+00:00"


def test_only_the_storage_layer_opens_sqlite_connections() -> None:
    offenders = []
    for root in ("core", "plugins", "contrib"):
        for path in (REPO / root).rglob("*.py"):
            if path.parent.name == "storage" and path.parent.parent.name == "core":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Attribute) and node.attr == "connect" and isinstance(node.value, ast.Name)
                        and node.value.id in {"sqlite3", "apsw", "sqlean"}):
                    offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, "open SQLite files through atomic_agent.storage:\n" + "\n".join(offenders)


MIGRATION_SETS = ("atomic_agent.sessions.session_schema", "atomic_agent.plugins.memory.memory_schema",
                  "atomic_agent.plugins.tasks.task_schema", "atomic_agent.plugins.telegram.delivery_schema")


def test_migration_sets_import_without_sqlite_utils() -> None:
    # they are imported on every start; only their steps (run when a file is behind) use it
    probe = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in MIGRATION_SETS) + \
        "print('sqlite_utils' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
