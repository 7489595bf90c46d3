"""Bad input against the durable turn lifecycle: each gets a clear result and loses nothing
already accepted."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionNotFoundError
from atomic_agent.sessions.store_errors import SessionStoreFullError, SessionStoreLockedError
from atomic_agent.turns.steering_inbox import SteerOutcome
from tests.agent.loop_harness import ToolLog, make_runtime
from tests.turns.turn_kit import answering_provider, replies, users


async def test_a_locked_database_gives_a_clear_error_naming_the_file_and_loses_nothing(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    await rt.run_turn("before the lock", session_id=sid)
    rt.sessions.conn.execute("PRAGMA busy_timeout=100")
    other = sqlite3.connect(rt.sessions.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SessionStoreLockedError) as caught:
            await rt.run_turn("while locked", session_id=sid)
        assert str(rt.sessions.path) in str(caught.value) and "nothing was written" in str(caught.value)
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [t.text for t in rt.lifecycle.ledger.lane(sid)] == ["before the lock"]  # no half-admitted turn
    after = await rt.run_turn("after the lock", session_id=sid)
    assert after.state == "completed"
    assert users(rt, sid) == ["before the lock", "after the lock"]
    await rt.close()


async def test_a_full_disk_gives_a_clear_error_and_keeps_what_was_accepted(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    await rt.run_turn("accepted before", session_id=sid)
    conn = rt.sessions.conn
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count={pages + 1}")  # the "disk" holds one more page
    with pytest.raises(SessionStoreFullError) as caught:
        await rt.run_turn("x" * 200_000, session_id=sid)
    assert str(rt.sessions.path) in str(caught.value) and "intact" in str(caught.value)
    conn.execute("PRAGMA max_page_count=1073741823")  # space was freed
    assert [t.state for t in rt.lifecycle.ledger.lane(sid)] == ["completed"]
    assert replies(rt, sid) == ["re: accepted before"]
    assert (await rt.run_turn("after space was freed", session_id=sid)).state == "completed"
    await rt.close()


async def test_a_steer_for_an_unknown_session_is_refused_and_queues_nothing(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    assert rt.steer("no-such-session", "hello") is SteerOutcome.NO_RUNNING_TURN
    assert rt.lifecycle.steers.store.conn.execute("select count(*) from steer_queue").fetchone()[0] == 0
    with pytest.raises(SessionNotFoundError):
        await rt.run_turn("hello", session_id="no-such-session")
    assert rt.lifecycle.ledger.in_state("queued", "running") == []  # nothing admitted for it
    await rt.close()


async def test_a_one_megabyte_steer_is_refused_as_too_large_and_the_turn_is_untouched(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow work")
    rt = make_runtime(tmp_path, answering_provider(), log)
    sid = rt.open_session(None, tmp_path).id
    task = asyncio.ensure_future(rt.run_turn("slow work", session_id=sid))
    await log.running("slow work")
    assert rt.steer(sid, "x" * 1_000_000) is SteerOutcome.TOO_LARGE
    release.set()
    result = await task
    assert result.state == "completed" and result.undelivered == ()
    assert users(rt, sid) == ["slow work"]
    await rt.close()


async def test_a_thousand_sends_in_one_second_are_all_admitted_and_answered_once_in_fifo_order(tmp_path: Path):
    provider = answering_provider()
    provider.delay_s = 0.001  # the first turn really waits on its model, so the rest arrive while it runs
    rt = make_runtime(tmp_path, provider)
    sid = rt.open_session(None, tmp_path).id
    rt.sessions.conn.execute("PRAGMA synchronous=NORMAL")  # keep the test quick; the benchmark measures FULL
    queued: list[dict] = []
    started = time.perf_counter()
    tasks = [asyncio.ensure_future(rt.run_turn(f"message {i}", session_id=sid, on_event=queued.append))
             for i in range(1000)]
    while sum(e["type"] == "turn_queued" for e in queued) < 1000:  # each send is admitted (durably) before it is told its position
        await asyncio.sleep(0)
    admitted = time.perf_counter() - started
    positions = [e["position"] for e in queued if e["type"] == "turn_queued"]
    assert positions == list(range(1000))  # each saw exactly the ones ahead of it
    results = await asyncio.gather(*tasks)
    assert [r.reply for r in results] == [f"re: message {i}" for i in range(1000)]
    assert replies(rt, sid) == [f"re: message {i}" for i in range(1000)]  # once each, in order
    assert [t.state for t in rt.lifecycle.ledger.lane(sid)] == ["completed"] * 1000
    print(f"1000 admissions took {admitted:.3f}s")
    await rt.close()
