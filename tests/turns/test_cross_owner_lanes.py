"""One lane, many owners: a turn starts only as the oldest live turn of its lane across every
process on the state dir. A live owner's turn is waited for; a dead owner's queued turn is
adopted and answered first; a turn a dead owner left running is interrupted, not waited on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.turns.turn_controller import SubmissionCancelledError
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_owner import OwnerLease
from atomic_agent.turns.turn_states import LaneBusy, StartedTurn
from tests.agent.loop_harness import ToolLog, make_runtime, until
from tests.turns.turn_kit import answering_provider, play_dead, replies, users


def test_a_turn_starts_only_as_the_oldest_live_turn_of_its_lane_across_owners(tmp_path: Path):
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    a, b = OwnerLease(tmp_path), OwnerLease(tmp_path)
    ledger_a, ledger_b = TurnLedger(store, a.owner), TurnLedger(store, b.owner)
    first = ledger_a.admit(session.id, "first", "http")
    second = ledger_b.admit(session.id, "second", "http")
    busy = ledger_b.start(second.turn_id, store.load(session.id))
    assert isinstance(busy, LaneBusy) and busy.blocker.turn_id == first.turn_id  # older, still queued
    started = ledger_a.start(first.turn_id, store.load(session.id))
    assert isinstance(started, StartedTurn)
    busy = ledger_b.start(second.turn_id, store.load(session.id))
    assert isinstance(busy, LaneBusy) and busy.blocker.state == "running"  # another owner's running turn
    assert [t.state for t in ledger_a.lane(session.id)] == ["running", "queued"]
    other = store.create(tmp_path)  # another lane is never held up
    assert isinstance(ledger_b.start(ledger_b.admit(other.id, "elsewhere", "http").turn_id, store.load(other.id)),
                      StartedTurn)
    a.release()
    b.release()
    store.close()


async def test_two_live_owners_never_run_one_session_at_once(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow first")
    one = make_runtime(tmp_path, answering_provider(), log)
    two = make_runtime(tmp_path, answering_provider(), log)
    sid = one.open_session(None, tmp_path).id
    first = asyncio.ensure_future(one.run_turn("slow first", session_id=sid))
    await log.running("slow first")
    second = asyncio.ensure_future(two.run_turn("second", session_id=sid))
    await until(lambda: len(two.lifecycle.ledger.lane(sid)) == 2)
    await asyncio.sleep(0.1)  # several of its lane polls
    assert two.lifecycle.ledger.lane(sid)[1].state == "queued"  # waits for the other process's turn
    release.set()
    assert [(await first).state, (await second).state] == ["completed", "completed"]
    assert users(two, sid) == ["slow first", "second"]
    assert replies(two, sid) == ["re: slow first", "re: second"]
    audit = [(r["turn_id"], r["to_state"]) for r in two.lifecycle.ledger.audit_rows()]
    finished_first = audit.index((first.result().turn_id, "completed"))
    assert audit.index((second.result().turn_id, "running")) > finished_first  # never both running
    await one.close()
    await two.close()


async def test_a_turn_behind_a_dead_owners_queued_turn_answers_that_one_first(tmp_path: Path):
    dead = make_runtime(tmp_path, answering_provider())
    sid = dead.open_session(None, tmp_path).id
    orphan = dead.lifecycle.admit(sid, "admitted by the dead", "http")  # it died before running it
    play_dead(dead)
    live = make_runtime(tmp_path, answering_provider())
    result = await live.run_turn("mine", session_id=sid)
    assert result.state == "completed"
    assert users(live, sid) == ["admitted by the dead", "mine"]  # FIFO across owners
    adopted = live.lifecycle.ledger.get(orphan.turn_id)
    assert (adopted.state, adopted.owner) == ("completed", live.lifecycle.lease.owner)
    await live.close()


async def test_a_turn_behind_a_dead_owners_running_turn_interrupts_it_instead_of_waiting(tmp_path: Path):
    log = ToolLog()
    dead = make_runtime(tmp_path, answering_provider(), log)
    sid = dead.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(dead.run_turn("hang forever", session_id=sid))
    await log.running("hang forever")
    play_dead(dead)
    live = make_runtime(tmp_path, answering_provider())
    result = await asyncio.wait_for(live.run_turn("next", session_id=sid), 5)
    assert result.state == "completed"
    lane = live.lifecycle.ledger.lane(sid)
    assert [(t.text, t.state) for t in lane] == [("hang forever", "interrupted"), ("next", "completed")]
    entries = live.sessions.load(sid).entries
    settled = [e for e in entries if e.kind == "tool_result" and e.turn_index == 0]
    assert len(settled) == 1 and "interrupted" in settled[0].text  # answered, not re-run
    assert [p for _, p, _ in log.started] == ["hang forever"]
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    await live.close()


async def test_a_cancel_while_another_owner_holds_the_lane_withdraws_the_turn(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow first")
    one = make_runtime(tmp_path, answering_provider(), log)
    two = make_runtime(tmp_path, answering_provider())
    sid = one.open_session(None, tmp_path).id
    first = asyncio.ensure_future(one.run_turn("slow first", session_id=sid))
    await log.running("slow first")
    cancel = asyncio.Event()
    second = asyncio.ensure_future(two.run_turn("never mind", session_id=sid, cancelled=cancel))
    await until(lambda: len(two.lifecycle.ledger.lane(sid)) == 2)
    cancel.set()
    with pytest.raises(SubmissionCancelledError):
        await second
    release.set()
    assert (await first).state == "completed"
    assert [t.state for t in two.lifecycle.ledger.lane(sid)] == ["completed", "cancelled"]
    assert users(two, sid) == ["slow first"]
    await one.close()
    await two.close()
