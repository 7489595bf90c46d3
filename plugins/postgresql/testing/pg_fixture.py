"""pytest fixtures for a real PostgreSQL: `postgresql_server`, one server per test session
(initdb + pg_ctl as an unprivileged user, loopback only; see pg_server), and
`postgresql_database`, a fresh empty database on it per test.

They never skip: a test that asked for PostgreSQL and cannot have one fails with the reason
(install the Debian package `postgresql`: ./scripts/system-packages). Installed for every
pytest run by the `atomic_agent_postgresql` pytest11 entry point.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from .pg_server import PostgresServer, start_postgres

MARKER = "postgresql"
_SPENT: dict[str, float] = {}  # test id -> seconds in setup, call and teardown (the PostgreSQL part's tests)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: needs the real PostgreSQL server fixture (Debian postgresql 15)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = getattr(item, "fixturenames", ())
        if ("postgresql_server" in names or "postgresql_database" in names) and item.get_closest_marker(MARKER) is None:
            item.add_marker(MARKER)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if MARKER in report.keywords:
        _SPENT[report.nodeid] = _SPENT.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How long the PostgreSQL part of the run took (the issue asks CI to say so)."""
    if _SPENT:
        terminalreporter.write_line(f"PostgreSQL part: {len(_SPENT)} tests, {sum(_SPENT.values()) / 60:.1f} min "
                                    "(setup, call and teardown of the tests that use the real server)")


@pytest.fixture(scope="session")
def postgresql_server() -> Iterator[PostgresServer]:
    began = time.monotonic()
    server = start_postgres()
    print(f"postgresql fixture: server up on 127.0.0.1:{server.port} in {time.monotonic() - began:.1f} s",
          file=sys.stderr, flush=True)
    try:
        yield server
    finally:
        server.remove()


def create_database(server: PostgresServer) -> str:
    """A new empty database on `server`; its name."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server.url(), password=server.password, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return name


@pytest.fixture
def postgresql_database(postgresql_server: PostgresServer) -> Iterator[Any]:
    """(server, database name) of a fresh empty database; dropped afterwards."""
    import psycopg

    name = create_database(postgresql_server)
    yield postgresql_server, name
    try:
        with psycopg.connect(postgresql_server.url(), password=postgresql_server.password, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    except psycopg.Error:
        pass  # a test that stopped the server: the cluster is removed at the end anyway
