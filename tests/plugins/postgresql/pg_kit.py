"""Shared pieces of the postgresql plugin's tests: a backend on a fresh database of the real
test server, and a raw connection for looking past the repositories."""

from __future__ import annotations

from typing import Any

import psycopg

from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
from atomic_agent.plugins.postgresql.pg_backend import PgBackend
from atomic_agent.turns import session_backend_kit


def url_of(database: Any, *, password: str | None = None) -> DatabaseUrl:
    server, name = database
    return DatabaseUrl("agent", "127.0.0.1", server.port, name, server.password if password is None else password)


def backend_on(database: Any, **kwargs: Any) -> PgBackend:
    return PgBackend(url_of(database), session_backend_kit, **kwargs)


def raw(database: Any) -> psycopg.Connection[Any]:
    url = url_of(database)
    return psycopg.connect(autocommit=True, **url.connect_kwargs(5))  # type: ignore[arg-type]


def tables(database: Any) -> set[str]:
    with raw(database) as conn:
        return {r[0] for r in conn.execute("select tablename from pg_tables where schemaname = 'public'")}
