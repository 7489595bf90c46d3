"""Durable steering: on disk before ACCEPTED, consumed in the same transaction as its user
row, handed back (kept queued, marked, until re-sent or dismissed) when its turn ends, kept
when consumption fails."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.request_keys import RequestKey, request_fingerprint
from atomic_agent.turns.steering_inbox import SteeringInbox, SteerOutcome
from atomic_agent.turns.turn_ledger import TurnLedger
from tests.agent.loop_harness import ToolLog, make_runtime
from tests.turns.turn_kit import answering_provider, users


def queued_texts(path: Path) -> list[str]:
    with sqlite3.connect(path) as other:  # a second connection sees only what was committed
        return [r[0] for r in other.execute("select text from steer_queue order by steer_id")]


async def test_an_accepted_steer_is_on_disk_before_steer_returns_and_leaves_as_a_user_row(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow start")
    rt = make_runtime(tmp_path, answering_provider(), log)
    sid = rt.open_session(None, tmp_path).id
    task = asyncio.ensure_future(rt.run_turn("slow start", session_id=sid))
    await log.running("slow start")
    assert rt.steer(sid, "do X instead") is SteerOutcome.ACCEPTED
    assert queued_texts(rt.sessions.path) == ["do X instead"]
    release.set()
    result = await task
    assert result.undelivered == () and queued_texts(rt.sessions.path) == []
    assert users(rt, sid) == ["slow start", "do X instead"]
    await rt.close()


async def test_steers_still_pending_at_the_end_are_handed_back_and_stay_queued_until_dismissed(tmp_path: Path):
    holder: dict = {}

    def steer_during_last_inference(request):
        holder["outcome"] = holder["rt"].steer(holder["sid"], "too late")
        holder["queued"] = queued_texts(holder["rt"].sessions.path)
        return calls(("reply", {"text": "bye"}))

    rt = make_runtime(tmp_path, ScriptedProvider([steer_during_last_inference]))
    sid = rt.open_session(None, tmp_path).id
    holder.update(rt=rt, sid=sid)
    result = await rt.run_turn("hi", session_id=sid)
    assert holder["outcome"] is SteerOutcome.ACCEPTED and holder["queued"] == ["too late"]
    assert result.undelivered == ("too late",)
    assert len(result.undelivered_ids) == 1
    assert queued_texts(rt.sessions.path) == ["too late"]  # until the caller re-sends or dismisses it
    assert rt.dismiss_steer(result.undelivered_ids[0]) and not rt.dismiss_steer(result.undelivered_ids[0])
    assert queued_texts(rt.sessions.path) == []
    await rt.close()


def test_a_failed_consumption_keeps_the_steer_queued(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    inbox = SteeringInbox(SteerQueue(store, "me"))
    inbox.open(sid, "turn-1")
    assert inbox.push(sid, "keep me").steered

    def record(texts: list[str]) -> None:
        raise RuntimeError("the transcript write failed")

    with pytest.raises(RuntimeError):
        inbox.consume(sid, record)
    assert queued_texts(store.path) == ["keep me"]
    assert inbox.consume(sid, lambda texts: None) == ["keep me"]
    assert queued_texts(store.path) == []
    store.close()


def test_a_steer_claimed_by_another_owner_is_not_consumed_twice(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    inbox = SteeringInbox(SteerQueue(store, "me"))
    inbox.open(sid, "turn-1")
    inbox.push(sid, "once")
    store.conn.execute("delete from steer_queue")  # another owner's consumption won the claim
    recorded: list[list[str]] = []
    assert inbox.consume(sid, recorded.append) == [] and recorded == []
    store.close()


def keyed_inbox(store: SessionStore) -> tuple[SteeringInbox, TurnLedger]:
    ledger = TurnLedger(store, "me")
    return SteeringInbox(SteerQueue(store, "me"), ledger.remember_key_in), ledger


def test_a_steer_sent_with_a_key_names_the_running_turn_and_the_key_never_steers_twice(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    inbox, ledger = keyed_inbox(store)
    inbox.open(sid, "turn-1")
    key = RequestKey("telegram:1:77", request_fingerprint("telegram", 77, "do X"))
    assert inbox.push(sid, "do X", key) is SteerOutcome.ACCEPTED
    found = ledger.turn_for_key(key.key)
    assert found is not None and found.turn_id == "turn-1" and found.caller_ref.startswith("steer:")
    # the same delivery again (a redelivery after a crash): nothing queued a second time
    assert inbox.push(sid, "do X", key) is SteerOutcome.DUPLICATE
    assert queued_texts(store.path) == ["do X"] and inbox.pending_count(sid) == 1
    store.close()


def test_a_key_that_admitted_a_turn_cannot_also_steer(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    inbox, ledger = keyed_inbox(store)
    key = RequestKey("k-1", "f")
    with store.write() as handle:
        ticket = ledger.admit_in(handle, sid, "first", "cli", sid, "turn-0")
        ledger.remember_key_in(handle, key, ticket.turn_id, sid)
    inbox.open(sid, "turn-1")
    assert inbox.push(sid, "first", key) is SteerOutcome.DUPLICATE
    assert queued_texts(store.path) == [] and ledger.turn_for_key("k-1").turn_id == "turn-0"
    store.close()


def test_a_keyed_steer_that_becomes_a_turn_of_its_own_takes_its_key_along(tmp_path: Path):
    from atomic_agent.turns.restart_recovery import steers_to_turns

    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    inbox, ledger = keyed_inbox(store)
    with store.write() as handle:
        running = ledger.admit_in(handle, sid, "first", "cli", sid, "turn-1")
    inbox.open(sid, running.turn_id)
    assert inbox.push(sid, "later", RequestKey("k-2", "f")) is SteerOutcome.ACCEPTED
    queue = inbox.queue
    [(steer_id, _)] = inbox.close_and_hand_back(sid)
    queue.hand_back([steer_id], running.turn_id)
    [ticket] = steers_to_turns(ledger, queue, queue.handed_back_by(running.turn_id), "me")
    # the key now names the turn whose reply answers "later", not the turn it was sent into
    assert ledger.turn_for_key("k-2").turn_id == ticket.turn_id != running.turn_id
    store.close()
