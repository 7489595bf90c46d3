"""Group commit on PostgreSQL: a write that acknowledges nothing commits with
synchronous_commit off (visible at once) and owes a WAL flush; `wait_durable` pays what is
owed with one synchronous commit, shared by every relaxed commit before it; a durable write
commits synchronously and owes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.sessions.transcript_entry import REPLY, USER, TranscriptEntry
from atomic_agent.storage.group_commit import deferred_sync
from tests.plugins.postgresql.pg_kit import backend_on, raw

WORK = Path("/work")


def _next_xid(database: Any) -> int:
    with raw(database) as conn:  # reads the counter without taking an id of its own
        return int(conn.execute("select pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()[0])


async def test_relaxed_commits_share_one_flush_and_durable_ones_owe_none(postgresql_database: Any):
    backend = backend_on(postgresql_database)
    store, other = backend.open_store(), backend.open_store()
    try:
        session = store.create(WORK)
        assert not store.db.owes_flush
        with store.write() as handle:
            assert handle.execute("show synchronous_commit").fetchone()[0] == "on"
        with deferred_sync():
            with store.write() as handle:
                assert handle.execute("show synchronous_commit").fetchone()[0] == "off"
            store.append(session, [TranscriptEntry(USER, 0, text="relaxed one")])
        store.append(session, [TranscriptEntry(REPLY, 0, text="relaxed two")], durable=False)
        assert [e.text for e in other.entries(session.id)] == ["relaxed one", "relaxed two"]  # visible at once
        assert store.db.owes_flush
        before = _next_xid(postgresql_database)
        await store.wait_durable()
        assert not store.db.owes_flush and _next_xid(postgresql_database) == before + 1  # one flush for both
        await store.wait_durable()
        store.sync_now()
        assert _next_xid(postgresql_database) == before + 1  # nothing owed: no second flush
    finally:
        store.close()
        other.close()
        backend.close()
