"""Restart recovery: orphaned steers become queued turns answered exactly once, a live
owner's turns are left alone, a one-shot command does not run other processes' queues."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.restart_recovery import recover_ledger
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_owner import OwnerLease
from tests.agent.loop_harness import ToolLog, make_runtime
from tests.turns.turn_kit import answering_provider, play_dead, replies, users


async def test_steers_left_by_a_dead_process_become_queued_turns_answered_exactly_once(tmp_path: Path):
    log = ToolLog()
    first = make_runtime(tmp_path, answering_provider(), log)
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("hang first", session_id=sid))
    await log.running("hang first")
    assert first.steer(sid, "steer one").steered and first.steer(sid, "steer two").steered
    play_dead(first)

    second = make_runtime(tmp_path, answering_provider())
    report = await second.recover(resume=True)
    results = await asyncio.gather(*report.results)
    assert len(report.steers_requeued) == 2 and report.resumed == report.steers_requeued
    assert [r.reply for r in results] == ["re: steer one", "re: steer two"]
    assert (await second.recover(resume=True)).resumed == ()  # answered once, never again
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    assert users(second, sid) == ["hang first", "steer one", "steer two"]
    assert replies(second, sid) == ["re: steer one", "re: steer two"]
    await second.close()


def test_recovery_leaves_a_live_owners_turns_alone(tmp_path: Path):
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    alive = OwnerLease(tmp_path)  # another process, still working
    ledger = TurnLedger(store, alive.owner)
    running = ledger.admit(session.id, "busy", "http")
    ledger.start(running.turn_id, session)
    waiting = ledger.admit(session.id, "next", "http")
    me = OwnerLease(tmp_path)
    found = recover_ledger(TurnLedger(store, me.owner), SteerQueue(store, me.owner), me.is_alive, resume=True)
    assert (found.interrupted, found.resumable) == ((), ())
    assert [t.state for t in ledger.lane(session.id)] == ["running", "queued"]
    alive.release()  # now it died
    found = recover_ledger(TurnLedger(store, me.owner), SteerQueue(store, me.owner), me.is_alive, resume=False)
    assert [t.turn_id for t in found.interrupted] == [running.turn_id]
    assert found.left_queued == (waiting.turn_id,)  # a one-shot command leaves them for a host
    me.release()
    store.close()
