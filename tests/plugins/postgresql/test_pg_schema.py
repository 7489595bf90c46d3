"""The PostgreSQL schema runner: idempotent, one applier at a time (advisory lock), and a
database migrated by a newer build refused before anything is written to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE, STEPS, migrate, read_schema_status
from atomic_agent.sessions.store_errors import SessionStoreError
from tests.plugins.postgresql.pg_kit import backend_on, raw, tables
from tests.sessions.thread_race import race


def test_a_fresh_database_gets_every_step_and_a_second_run_applies_none(postgresql_database: Any):
    with raw(postgresql_database) as conn:
        assert migrate(conn, "db") == [s.name for s in STEPS]
        assert migrate(conn, "db") == []
        status = read_schema_status(conn)
    assert status.applied == tuple(s.name for s in STEPS) and status.pending() == [] and status.writer
    assert {"sessions", "transcript", "turns", "turn_audit", "steer_queue", "idempotency_keys"} <= tables(
        postgresql_database)


def test_two_processes_starting_at_once_apply_each_step_once(postgresql_database: Any):
    def start() -> list[str]:
        with raw(postgresql_database) as conn:
            return migrate(conn, "db")

    ran = race(start, start, start)
    assert sorted(map(len, ran)) == [0, 0, len(STEPS)]
    with raw(postgresql_database) as conn:
        assert conn.execute(f"select count(*) from {MIGRATIONS_TABLE}").fetchone()[0] == len(STEPS)


def test_a_database_from_a_newer_build_is_refused_and_left_untouched(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    backend.open_store(Path("unused")).close()
    with raw(postgresql_database) as conn:
        conn.execute(f"insert into {MIGRATIONS_TABLE} (name, build) values ('m999_from_the_future', '9.9.9')")
        before = conn.execute("select count(*) from pg_class").fetchone()[0]
    backend.close()
    again = backend_on(postgresql_database)
    try:
        with pytest.raises(SessionStoreError, match=r"newer atomic-agent \(9\.9\.9.*m999_from_the_future.*Upgrade"):
            again.open_store(Path("unused"))
    finally:
        again.close()
    with raw(postgresql_database) as conn:
        assert conn.execute("select count(*) from pg_class").fetchone()[0] == before
