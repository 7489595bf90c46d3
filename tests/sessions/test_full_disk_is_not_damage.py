"""Class: a full disk read as damage. `doctor` said "the disk is full" while `run` told the user
to move an intact sessions.sqlite aside (which throws every session away). Opening the store
now tells the causes apart; a full disk says so, by fault injection at the open and at the
migration, in SQLite's and the OS's spellings."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.cli.main import main
from atomic_agent.reliability.failure_taxonomy import environment_kind
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.store_errors import SessionStoreError, SessionStoreFullError
from atomic_agent.storage import sqlite_store

FULL = [
    pytest.param(lambda: sqlite3.OperationalError("database or disk is full"), id="sqlite-full"),
    pytest.param(lambda: sqlite3.DatabaseError("database or disk is full"), id="sqlite-full-base-class"),
    pytest.param(lambda: OSError(errno.ENOSPC, "No space left on device"), id="enospc"),
    pytest.param(lambda: OSError(errno.EDQUOT, "Disk quota exceeded"), id="edquot"),
]


def _failing(make: Any) -> Any:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise make()
    return fail


@pytest.mark.parametrize("make", FULL)
@pytest.mark.parametrize("where", ["open_sqlite", "schema_read", "migrate"])
def test_full_disk_opening_sessions_is_reported_as_full_not_damage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   make: Any, where: str) -> None:
    SessionStore(tmp_path).close()  # an intact database
    if where == "open_sqlite":
        monkeypatch.setattr(sqlite_store, "open_sqlite", _failing(make))
    else:  # the sessions store opens through SqliteStore: its schema read, then its migration step
        monkeypatch.setattr(sqlite_store, "migrate" if where == "migrate" else "read_schema_state", _failing(make))
    with pytest.raises(SessionStoreFullError) as caught:
        SessionStore(tmp_path)
    message = str(caught.value)
    assert "disk is full" in message and "not damaged" in message and "free some space" in message
    assert "move-aside" not in message
    assert environment_kind(caught.value) == "full"


@pytest.mark.parametrize("make", FULL)
def test_full_disk_run_says_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str], make: Any) -> None:
    state = tmp_path / "state"
    state.mkdir()
    SessionStore(state).close()
    monkeypatch.setattr(sqlite_store, "open_sqlite", _failing(make))
    with pytest.raises(SystemExit) as exited:
        main(["--state-dir", str(state), "run", "hello"])
    err = capsys.readouterr().err
    assert exited.value.code != 0
    assert "disk is full" in err and "move-aside" not in err and "Traceback" not in err


@pytest.mark.parametrize(("make", "said"), [
    (lambda: sqlite3.OperationalError("attempt to write a readonly database"), "read-only"),
    (lambda: OSError(errno.EROFS, "Read-only file system"), "read-only"),
    (lambda: OSError(errno.EACCES, "Permission denied"), "permission"),
    (lambda: sqlite3.OperationalError("database is locked"), "locked"),
])
def test_full_disk_siblings_read_only_and_locked_are_not_damage_either(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       make: Any, said: str) -> None:
    SessionStore(tmp_path).close()
    monkeypatch.setattr(sqlite_store, "open_sqlite", _failing(make))
    with pytest.raises(SessionStoreError) as caught:
        SessionStore(tmp_path)
    assert said in str(caught.value) and "move-aside" not in str(caught.value)


def test_full_disk_damage_still_advises_moving_the_file_aside(tmp_path: Path) -> None:
    (tmp_path / "sessions.sqlite").write_bytes(b"not a database at all" * 200)
    with pytest.raises(SessionStoreError, match="doctor --move-aside sessions.sqlite"):
        SessionStore(tmp_path)
