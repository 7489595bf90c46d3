"""A memory database locked by another process: writes fail clearly, reads keep working."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryDatabaseLockedError
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore

HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT INTO memories (content, created_at, updated_at) VALUES ('held by the other process', 1, 1)")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@pytest.fixture
def lock_holder(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[str]]]:
    path = tmp_path / "memory.sqlite"
    db = MemoryDatabase.open(path)
    NoteStore(db).store("written before the lock")
    db.close()
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    try:
        yield path, proc
    finally:
        if proc.poll() is None:
            proc.communicate("\n", timeout=10)


def test_writes_raise_a_locked_error_naming_the_file_and_nothing_is_written(lock_holder) -> None:
    path, _proc = lock_holder
    db = MemoryDatabase.open(path, busy_timeout_s=0.1)
    notes, profile = NoteStore(db), ProfileStore(db)
    with pytest.raises(MemoryDatabaseLockedError) as caught:
        notes.store("should not land")
    assert str(path) in str(caught.value) and "locked by another process" in str(caught.value)
    with pytest.raises(MemoryDatabaseLockedError):
        profile.set("name", "Alex")
    assert [h.note.content for h in notes.recall("written lock")] == ["written before the lock"]
    assert profile.list() == []
    db.close()


def test_writes_work_again_once_the_other_process_lets_go(lock_holder) -> None:
    path, proc = lock_holder
    db = MemoryDatabase.open(path, busy_timeout_s=0.1)
    with pytest.raises(MemoryDatabaseLockedError):
        NoteStore(db).store("too early")
    proc.communicate("\n", timeout=10)
    NoteStore(db).store("after the lock")
    assert NoteStore(db).count() == 2
    db.close()
