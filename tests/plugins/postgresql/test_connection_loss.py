"""A connection the server drops: mid-transaction the whole transaction is gone (a clean
failure, nothing half-written, the password never in the message) and the store object
carries on on a new connection; between transactions the next read or write simply
reconnects, even across a restart of the server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.sessions.store_errors import SessionStoreError
from atomic_agent.sessions.transcript_entry import USER, TranscriptEntry
from tests.plugins.postgresql.pg_kit import backend_on, raw

WORK = Path("/work")


def _kill(database: Any, store: Any) -> None:
    """Terminate the server process behind `store`'s connection (what a failover or a network cut does)."""
    with raw(database) as conn:
        assert conn.execute("select pg_terminate_backend(%s)", [store.db.conn.info.backend_pid]).fetchone()[0]


def test_a_connection_dropped_mid_transaction_writes_nothing_and_the_store_carries_on(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        ledger, steers = backend.ledger(store, "a"), backend.steers(store, "a")
        session = store.create(WORK)
        with pytest.raises(SessionStoreError, match="nothing of the transaction in progress was written") as failed:
            with store.write():
                ticket = ledger.admit(session.id, "half", "cli")
                store.append(session, [TranscriptEntry(USER, 0, text="half")])
                _kill(postgresql_database, store)
                steers.enqueue(session.id, ticket.turn_id, "never")
        assert postgresql_database[0].password not in str(failed.value)
        other = backend.open_store()
        assert ledger.get(ticket.turn_id) is None and other.entries(session.id) == []  # neither half landed
        assert other.list()[0]["id"] == session.id and steers.left_by(lambda owner: False) == []
        kept = ledger.admit(session.id, "after", "cli")  # the same store object, on a new connection
        assert [t.text for t in backend.ledger(other, "b").lane(session.id)] == ["after"] == [kept.text]
        other.close()
    finally:
        store.close()
        backend.close()


def test_an_idle_connection_dropped_between_transactions_is_replaced_without_an_error(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        session = store.create(WORK)
        _kill(postgresql_database, store)
        assert store.exists(session.id)  # a read outside a transaction: retried on a new connection
        _kill(postgresql_database, store)
        store.append(session, [TranscriptEntry(USER, 0, text="after the cut")])  # BEGIN found the cut first
        assert [e.text for e in store.entries(session.id)] == ["after the cut"]
    finally:
        store.close()
        backend.close()


def test_a_server_restart_under_a_running_store_loses_nothing_committed(postgresql_database: Any):
    server, _name = postgresql_database
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        ledger = backend.ledger(store, "a")
        session = store.create(WORK)
        before = ledger.admit(session.id, "before", "cli")
        server.restart()
        after = ledger.admit(session.id, "after", "cli")
        assert [t.turn_id for t in ledger.lane(session.id)] == [before.turn_id, after.turn_id]
        assert after.admitted_order > before.admitted_order and after.position == 1
        fresh = backend.open_store()  # from the pool, whose connections the restart cut
        assert fresh.exists(session.id)
        fresh.close()
    finally:
        store.close()
        backend.close()
