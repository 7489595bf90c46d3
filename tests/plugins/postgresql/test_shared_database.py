"""The `shared_database` service other plugins keep their shared state in: their schema steps
run once under the core's migration runner in a namespace of their own (a newer build of one
plugin refuses only that plugin), transactions commit or roll back whole, and a named lease
is held by one process of the fleet at a time and moves when its holder's connection ends.
What doctor and status use (pending steps, a read-only connection) writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from atomic_agent.api import SessionStoreError
from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from tests.plugins.postgresql.pg_kit import backend_on, raw, tables

STEPS = [("demo.m001_items", ["CREATE TABLE IF NOT EXISTS demo_items (id BIGINT PRIMARY KEY, what TEXT NOT NULL)"])]


def test_a_plugins_steps_run_once_and_a_newer_build_of_that_plugin_is_refused_before_writing(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        assert SharedDatabase(backend).ensure_schema("demo", STEPS) == ["demo.m001_items"]
        assert SharedDatabase(backend).ensure_schema("demo", STEPS) == []  # another process: nothing to do
        with raw(postgresql_database) as conn:
            conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, build) VALUES ('demo.m002_future', '99.0')")
        with pytest.raises(SessionStoreError, match=r"demo plugin's steps demo.m002_future are unknown"):
            SharedDatabase(backend).ensure_schema("demo", STEPS)
        # the core and other plugins are not refused for a step they do not own
        assert SharedDatabase(backend).ensure_schema("other", [("other.m001_x", ["SELECT 1"])]) == ["other.m001_x"]
        with pytest.raises(ValueError, match="must be named demo"):
            SharedDatabase(backend).ensure_schema("demo", [("m009_x", ["SELECT 1"])])
    finally:
        backend.close()


def test_pending_steps_and_read_only_reads_write_nothing_and_a_write_there_is_refused(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        shared = SharedDatabase(backend)
        assert shared.pending_steps("demo", STEPS) == ["demo.m001_items"]
        with shared.read_only() as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert tables(postgresql_database) == set()  # not even the core's schema was applied
        shared.ensure_schema("demo", STEPS)
        assert shared.pending_steps("demo", STEPS) == []
        with pytest.raises(SessionStoreError, match="read-only transaction"), shared.read_only() as conn:
            conn.execute("INSERT INTO demo_items VALUES (1, 'refused')")
        with shared.read_only() as conn:
            assert conn.execute("SELECT count(*) FROM demo_items").fetchone() == (0,)
        with raw(postgresql_database) as conn:
            conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} (name, build) VALUES ('demo.m002_future', '99.0')")
        with pytest.raises(SessionStoreError, match=r"demo plugin's steps demo.m002_future are unknown"):
            shared.pending_steps("demo", STEPS)
    finally:
        backend.close()


class DemoError(RuntimeError):
    """The demo plugin's own error (what a QmarkEngine's `refuse` makes)."""


def test_a_read_only_qmark_engine_applies_no_schema_reads_rows_as_dicts_and_refuses_every_write(
        postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        shared = SharedDatabase(backend)
        with shared.read_only_qmark("demo", DemoError) as engine:
            assert engine.query("SELECT ? AS n", [7]) == [{"n": 7}]
        assert tables(postgresql_database) == set()  # not even the core's schema was applied
        with shared.qmark_engine("demo", STEPS, DemoError).write() as tx:
            tx.execute("INSERT INTO demo_items VALUES (?, ?)", [1, "kept"])
        with shared.read_only_qmark("demo", DemoError) as engine:
            assert engine.query("SELECT id, what FROM demo_items") == [{"id": 1, "what": "kept"}]
            with pytest.raises(DemoError, match="read-only"):
                engine.write()
            with pytest.raises(DemoError, match="read-only"):
                engine.query("INSERT INTO demo_items VALUES (?, ?)", [2, "refused"])
        with shared.read_only_qmark("demo", DemoError) as engine:
            assert engine.query("SELECT count(*) AS n FROM demo_items") == [{"n": 1}]
    finally:
        backend.close()


def test_a_transaction_cut_off_by_an_error_writes_nothing(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        shared = SharedDatabase(backend)
        shared.ensure_schema("demo", STEPS)
        with shared.transaction() as conn:
            conn.execute("INSERT INTO demo_items VALUES (1, 'kept')")
        with pytest.raises(RuntimeError), shared.transaction() as conn:
            conn.execute("INSERT INTO demo_items VALUES (2, 'lost')")
            raise RuntimeError("cut off")
        with pytest.raises(SessionStoreError, match="cannot be used"), shared.transaction() as conn:
            conn.execute("INSERT INTO demo_items VALUES (1, 'duplicate')")
        with shared.connection() as conn:
            assert conn.execute("SELECT id, what FROM demo_items").fetchall() == [(1, "kept")]
    finally:
        backend.close()


def test_a_named_lease_has_one_holder_and_moves_when_the_holders_connection_ends(postgresql_database: Any):
    one, two = backend_on(postgresql_database), backend_on(postgresql_database)
    try:
        first = SharedDatabase(one).lease("telegram:bot1")
        assert first is not None and first.held()
        assert SharedDatabase(two).lease("telegram:bot1") is None
        assert SharedDatabase(two).lease("telegram:bot2") is not None  # another name is free
        with raw(postgresql_database) as conn:  # what a SIGKILL of the holder looks like
            conn.execute("select pg_terminate_backend(%s, 5000)", [first._conn.info.backend_pid])
        second = SharedDatabase(two).lease("telegram:bot1")
        assert second is not None and second.held()
        assert not first.held()  # its process learns on its next check that the lease moved
        second.release()
        assert not second.held()
        assert SharedDatabase(one).lease("telegram:bot1") is not None
    finally:
        one.close()
        two.close()
