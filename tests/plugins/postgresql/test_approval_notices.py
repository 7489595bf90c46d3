"""A waiter on an approval is woken by the database's notice that the record settled, from
any host, not by reading its record over and over; when the listen connection drops, waiters
fall back to reading and the listener comes back by itself."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from atomic_agent.approval.approval_records import APPROVAL, APPROVED, OPERATOR, FrozenCall
from atomic_agent.approval.approval_repository import ApprovalRepository
from tests.plugins.postgresql.pg_kit import backend_on, raw


def _ask(records: ApprovalRepository) -> Any:
    return records.create(kind=APPROVAL, session_id="s1", category="shell", level=1, summary="make",
                          frozen=FrozenCall("os.shell", '{"command":"make"}', "/work"), ttl_s=60.0,
                          call_key="s1/0/1/0")


async def _until(check: Any, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


async def test_a_waiter_is_woken_by_the_notice_of_an_answer_on_another_host_not_by_polling(
        postgresql_database: Any) -> None:
    host_a, host_b = backend_on(postgresql_database), backend_on(postgresql_database)
    try:
        records = host_b.approvals()
        record = _ask(records)
        reads = 0
        read = records._get_with_now

        def counted(approval_id: str) -> Any:
            nonlocal reads
            reads += 1
            return read(approval_id)

        records._get_with_now = counted  # type: ignore[method-assign]
        waiting = asyncio.ensure_future(records.wait(record.id, poll_s=30.0))  # a poll alone would take 30 s
        assert records.notices is not None
        await _until(lambda: records.notices.listening)
        await asyncio.sleep(0.3)
        assert not waiting.done() and reads <= 2  # the first read, and the one after the listener came up
        answered_at = time.monotonic()
        host_a.approvals().answer(record.id, "once", principal=OPERATOR, surface="telegram")
        # the notice, not the 30 s poll: well under it even on a loaded machine
        seen = await asyncio.wait_for(waiting, 15)
        assert (seen.state, seen.surface) == (APPROVED, "telegram") and time.monotonic() - answered_at < 15
    finally:
        host_a.close()
        host_b.close()


async def test_a_dropped_listen_connection_falls_back_to_reading_and_listens_again(postgresql_database: Any) -> None:
    backend = backend_on(postgresql_database)
    try:
        records = backend.approvals()
        first = _ask(records)
        waiting = asyncio.ensure_future(records.wait(first.id, poll_s=0.05))
        assert records.notices is not None
        await _until(lambda: records.notices.listening)
        with raw(postgresql_database) as conn:
            ended = conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE query LIKE 'LISTEN atomic_agent_approvals%'").fetchall()
        assert ended == [(True,)]
        records.answer(first.id, "once", principal=OPERATOR, surface="cli")
        assert (await asyncio.wait_for(waiting, 30)).state == APPROVED  # read, whatever the listener's state
        await _until(lambda: records.notices.listening)  # back by itself
        second = _ask(records)
        waiting = asyncio.ensure_future(records.wait(second.id, poll_s=30.0))
        await asyncio.sleep(0.2)
        other_host = backend_on(postgresql_database)
        try:
            other_host.approvals().cancel(second.id, "no longer needed")
        finally:
            other_host.close()
        assert (await asyncio.wait_for(waiting, 15)).state == "cancelled"  # the notice, not the 30 s poll
    finally:
        backend.close()
