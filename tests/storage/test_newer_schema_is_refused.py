"""Class: a state file written by a newer build. sessions.sqlite used to be accepted and its
`user_version` rewritten down (99 -> 5): a silent downgrade that loses what the newer build
stored. Every SQLite state file with migrations (sessions, tasks, memory, telegram) now
refuses it before anything is written, and the message says which build wrote it and what
to do. Spellings: a higher user_version, an unknown migration row, both, and a file whose
`_schema_writer` names the build."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from atomic_agent.cli.main import main
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryDatabaseRefusedError
from atomic_agent.plugins.serve.webhook_deliveries import WebhookDeliveries
from atomic_agent.plugins.tasks.task_database import TaskDatabase
from atomic_agent.plugins.tasks.task_errors import TaskStoreError
from atomic_agent.plugins.telegram.delivery_database import TelegramStoreNewerError
from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.sessions.session_store import SessionStore, SessionStoreError
from atomic_agent.storage.sqlite_migrations import NewerSchemaError, migrate


def _make_newer(path: Path, *, version: int | None, future_step: bool, writer: str | None) -> None:
    conn = sqlite3.connect(path)
    if version is not None:
        conn.execute(f"PRAGMA user_version = {version}")
    if future_step:
        conn.execute("INSERT INTO _migrations VALUES ('m099_from_the_future', 'later')")
    if writer is not None:
        conn.execute("UPDATE _schema_writer SET build = ?", [writer])
    conn.commit()
    conn.close()


SPELLINGS = [
    pytest.param({"version": 99, "future_step": False, "writer": None}, "schema version 99", id="user_version-99"),
    pytest.param({"version": None, "future_step": True, "writer": None}, "m099_from_the_future", id="unknown-step"),
    pytest.param({"version": 42, "future_step": True, "writer": None}, "schema version 42", id="both"),
    pytest.param({"version": 70, "future_step": False, "writer": "9.9.9"}, "written by atomic-agent 9.9.9", id="writer-named"),
]


def _sessions(state: Path) -> None:
    SessionStore(state).close()


def _tasks(state: Path) -> None:
    TaskDatabase.open(state / "tasks.sqlite").close()


def _memory(state: Path) -> None:
    MemoryDatabase.open(state / "memory.sqlite").close()


def _telegram(state: Path) -> None:
    DeliveryStore.of_state_dir(state, lambda: 0).close()


def _webhooks(state: Path) -> None:
    WebhookDeliveries(state).close()


def _check_refused(tmp_path: Path, file: str, opener: Callable[[Path], None], error: type[Exception],
                   spelling: dict, named: str) -> None:
    state = tmp_path / "state"
    state.mkdir()
    opener(state)  # made by this build
    path = state / file
    _make_newer(path, **spelling)
    before = path.read_bytes()
    with pytest.raises(error) as caught:
        opener(state)
    message = str(caught.value)
    assert str(path) in message and "newer atomic-agent" in message and named in message
    assert "left untouched" in message and "Upgrade atomic-agent" in message
    assert "move-aside" not in message  # not damage: moving it aside would lose the newer build's data
    assert path.read_bytes() == before
    with sqlite3.connect(path) as conn:  # still what the newer build wrote, never downgraded
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    assert version == (spelling["version"] if spelling["version"] is not None else before_version(before))


def before_version(raw: bytes) -> int:
    return int.from_bytes(raw[60:64], "big")  # the header's user_version field


@pytest.mark.parametrize(("spelling", "named"), SPELLINGS)
def test_newer_schema_sessions_sqlite_is_refused_untouched(tmp_path: Path, spelling: dict, named: str) -> None:
    _check_refused(tmp_path, "sessions.sqlite", _sessions, SessionStoreError, spelling, named)


@pytest.mark.parametrize(("spelling", "named"), SPELLINGS)
def test_newer_schema_tasks_sqlite_is_refused_untouched(tmp_path: Path, spelling: dict, named: str) -> None:
    _check_refused(tmp_path, "tasks.sqlite", _tasks, TaskStoreError, spelling, named)


@pytest.mark.parametrize(("spelling", "named"), SPELLINGS)
def test_newer_schema_memory_sqlite_is_refused_untouched(tmp_path: Path, spelling: dict, named: str) -> None:
    _check_refused(tmp_path, "memory.sqlite", _memory, MemoryDatabaseRefusedError, spelling, named)


@pytest.mark.parametrize(("spelling", "named"), SPELLINGS)
def test_newer_schema_telegram_sqlite_is_refused_untouched(tmp_path: Path, spelling: dict, named: str) -> None:
    _check_refused(tmp_path, "telegram.sqlite", _telegram, TelegramStoreNewerError, spelling, named)


@pytest.mark.parametrize(("spelling", "named"), SPELLINGS)
def test_newer_schema_webhooks_sqlite_is_refused_untouched(tmp_path: Path, spelling: dict, named: str) -> None:
    _check_refused(tmp_path, "serve/webhooks.sqlite", _webhooks, NewerSchemaError, spelling, named)


def test_newer_schema_migrate_itself_refuses_whatever_opened_the_file(tmp_path: Path) -> None:
    """A store that forgot the inspect check still cannot downgrade: migrate refuses too."""
    def m001_one(db) -> None:  # type: ignore[no-untyped-def]
        db.execute("CREATE TABLE IF NOT EXISTS t (x)")

    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    migrate(conn, [m001_one])
    conn.execute("PRAGMA user_version = 3")
    with pytest.raises(NewerSchemaError, match="schema version 3"):
        migrate(conn, [m001_one])
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
    assert conn.execute("SELECT build FROM _schema_writer").fetchone()[0]  # this build recorded itself
    conn.close()


def test_newer_schema_run_says_upgrade_and_exits_non_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    state.mkdir()
    _sessions(state)
    _make_newer(state / "sessions.sqlite", version=99, future_step=False, writer="9.9.9")
    before = (state / "sessions.sqlite").read_bytes()
    with pytest.raises(SystemExit) as exited:
        main(["--state-dir", str(state), "run", "hello"])
    err = capsys.readouterr().err
    assert exited.value.code == 2  # the CLI's usage/state error code
    assert "written by a newer atomic-agent" in err and "written by atomic-agent 9.9.9" in err and "Traceback" not in err
    assert (state / "sessions.sqlite").read_bytes() == before
