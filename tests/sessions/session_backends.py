"""The backends the session-database conformance suite runs against.

Each harness is the product's backend record plus what only a test needs: a raw statement
past the protocol, to prove the database itself refuses what the protocol says never
happens (rewriting the audit, moving a frozen turn), and the error it refuses with.
Each harness makes its backend for one test (`make`): SQLite's is the product's record on
the test's temporary directory; PostgreSQL's is the plugin's backend on a fresh database of
the session's real server (plugins/postgresql/testing).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import psycopg
import pytest

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.turns.session_backends import SQLITE_BACKEND, SessionBackend
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from atomic_agent.turns.turn_states import StartedTurn

RawSql = Callable[[Any, str, Sequence[Any]], object]


@attrs.frozen
class BackendHarness:
    name: str
    make: Callable[[pytest.FixtureRequest], Any]  # the backend for one test (a SessionBackend's shape)
    raw_sql: RawSql  # (store, statement, params): run it outside every protocol method
    refusal: type[BaseException]  # what the database raises when a guard refuses a raw statement


def _sqlite_raw(store: Any, sql: str, params: Sequence[Any]) -> object:
    return store.conn.execute(sql, list(params)).fetchall()


def _postgres_backend(request: pytest.FixtureRequest) -> Any:
    from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
    from atomic_agent.plugins.postgresql.pg_backend import PgBackend
    from atomic_agent.turns import session_backend_kit

    server, database = request.getfixturevalue("postgresql_database")
    backend = PgBackend(DatabaseUrl("agent", "127.0.0.1", server.port, database, server.password),
                        session_backend_kit, pool_size=20)
    request.addfinalizer(backend.close)
    return backend


def _postgres_raw(store: Any, sql: str, params: Sequence[Any]) -> object:
    cursor = store.db.conn.execute(sql.replace("?", "%s"), list(params))
    return cursor.fetchall() if cursor.description else []


HARNESSES: list[BackendHarness] = [
    BackendHarness("sqlite", lambda request: SQLITE_BACKEND, _sqlite_raw, sqlite3.DatabaseError),
    BackendHarness("postgresql", _postgres_backend, _postgres_raw, psycopg.Error),
]


@attrs.define
class OpenedBackend:
    """One backend on one fresh database; every store object it opens is another "process"."""

    harness: BackendHarness
    backend: SessionBackend
    where: Path
    opened: list[SessionRepository] = attrs.field(factory=list)

    @property
    def refusal(self) -> type[BaseException]:
        return self.harness.refusal

    def open(self) -> SessionRepository:
        store = self.backend.open_store(self.where)
        self.opened.append(store)
        return store

    def ledger(self, store: SessionRepository, owner: str = "a") -> TurnRepository:
        return self.backend.ledger(store, owner)

    def steers(self, store: SessionRepository, owner: str = "a") -> SteerRepository:
        return self.backend.steers(store, owner)

    def raw(self, store: SessionRepository, sql: str, *params: Any) -> object:
        return self.harness.raw_sql(store, sql, params)

    def started(self, store: SessionRepository, text: str = "hi",
                owner: str = "a") -> tuple[SessionState, TurnRepository, StartedTurn]:
        """A new session whose first turn is running under `owner`."""
        session = store.create(self.where / "work")
        ledger = self.ledger(store, owner)
        started = ledger.start(ledger.admit(session.id, text, "cli").turn_id, session)
        assert isinstance(started, StartedTurn)
        return session, ledger, started

    def close_all(self) -> None:
        for store in self.opened:
            store.close()
