"""Seed 000's release acceptance matrix, one test per row this runtime owns:
concurrency, stop, writers, restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from atomic_agent.sessions.store_errors import StaleWriterError
from atomic_agent.sessions.transcript_entry import REPLY, TranscriptEntry
from atomic_agent.turns.turn_states import response_hash
from tests.agent.loop_harness import ToolLog, make_runtime, until
from tests.turns.turn_kit import answering_provider, play_dead, replies, users


async def test_three_sessions_run_concurrently_while_a_same_session_follow_up_queues_fifo(tmp_path: Path):
    log = ToolLog()
    release = log.hold(*(f"slow task {i}" for i in range(3)))
    rt = make_runtime(tmp_path, answering_provider(), log)
    ids = [rt.open_session(None, tmp_path).id for _ in range(3)]
    follow_events: list[dict] = []
    runs = [rt.run_turn(f"slow task {i}", session_id=sid) for i, sid in enumerate(ids)]
    follow_up = rt.run_turn("follow-up", session_id=ids[0], on_event=follow_events.append)
    everything = asyncio.gather(*runs, follow_up)
    await until(lambda: len(log.started) == 3)  # no tool ends before all three sessions' have started
    release.set()
    results = await everything

    assert [r.state for r in results] == ["completed"] * 4
    queued = next(e for e in follow_events if e["type"] == "turn_queued")
    assert queued["position"] == 1 and queued["turnId"] == results[3].turn_id  # visibly queued behind one
    starts = sorted(t for _, _, t in log.started)
    ends = sorted(t for _, _, t in log.finished)
    assert starts[2] < ends[0]  # the three sessions' tools overlapped
    assert replies(rt, ids[0]) == ["re: slow task 0", "re: follow-up"]  # drained FIFO
    lane = rt.lifecycle.ledger.lane(ids[0])
    assert [(t.text, t.state) for t in lane] == [("slow task 0", "completed"), ("follow-up", "completed")]
    await rt.close()


async def test_stop_changes_only_its_lane_while_another_turn_completes(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow other lane")
    rt = make_runtime(tmp_path, answering_provider(), log)
    a, b = rt.open_session(None, tmp_path).id, rt.open_session(None, tmp_path).id
    hung = asyncio.ensure_future(rt.run_turn("hang here", session_id=a))
    queued_on_a = asyncio.ensure_future(rt.run_turn("after the stop", session_id=a))
    other = asyncio.ensure_future(rt.run_turn("slow other lane", session_id=b))
    await log.running("hang here", "slow other lane")
    assert rt.stop(a) is True
    release.set()
    stopped, after, completed = await asyncio.gather(hung, queued_on_a, other)

    assert (stopped.status, stopped.state) == ("cancelled", "stopped")
    assert after.state == "completed" and after.reply == "re: after the stop"  # its lane's queue kept going
    assert completed.state == "completed" and completed.reply == "re: slow other lane"
    assert rt.stop(a) is False  # nothing runs there any more
    audit = rt.lifecycle.ledger.audit_rows(stopped.turn_id)
    assert [r["to_state"] for r in audit] == ["queued", "running", "stopped"]
    await rt.close()


async def test_stale_generation_cannot_change_a_finalized_answer(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    result = await rt.run_turn("hello", session_id=sid)
    ledger = rt.lifecycle.ledger
    turn = ledger.get(result.turn_id)
    assert turn is not None and turn.response_hash == response_hash("re: hello")
    from atomic_agent.sessions.writer_guard import TurnGuard

    stale = TurnGuard(result.turn_id, turn.generation)  # the very generation that wrote the answer
    session = rt.sessions.load(sid)
    with pytest.raises(StaleWriterError):  # a late stream chunk or retry callback
        rt.sessions.append(session, [TranscriptEntry(REPLY, turn.turn_index or 0, text="rewritten")], guard=stale)
    with pytest.raises(StaleWriterError):  # a second finalizer
        ledger.finalize(stale, session, [], "failed", "late", "transport", "rewritten")
    with pytest.raises(StaleWriterError):  # the fenced store a step would have used
        rt.sessions.fenced(stale).save_state(session)
    after = ledger.get(result.turn_id)
    assert after == turn  # state, generation and response hash untouched
    assert replies(rt, sid) == ["re: hello"]
    await rt.close()


async def test_after_restart_queued_turns_drain_and_running_turns_are_not_replayed(tmp_path: Path):
    log1 = ToolLog()
    first = make_runtime(tmp_path, answering_provider(), log1)
    sid = first.open_session(None, tmp_path).id
    other = first.open_session(None, tmp_path).id
    running = asyncio.ensure_future(first.run_turn("hang on the first", session_id=sid))
    parked = [asyncio.ensure_future(first.run_turn(text, session_id=sid)) for text in ("second", "third")]
    parked_other = asyncio.ensure_future(first.run_turn("hang elsewhere", session_id=other))
    await until(lambda: len(log1.started) == 2)  # both hanging tools run
    assert [p for _, p, _ in log1.started] == ["hang on the first", "hang elsewhere"]
    play_dead(first)  # the process is gone; its tasks are zombies from here on

    log2 = ToolLog()
    second = make_runtime(tmp_path, answering_provider(), log2)
    report = await second.recover(resume=True)
    results = await asyncio.gather(*report.results)

    ledger = second.lifecycle.ledger
    lane = ledger.lane(sid)
    assert [(t.text, t.state) for t in lane] == [("hang on the first", "interrupted"), ("second", "completed"),
                                                 ("third", "completed")]
    assert [r.reply for r in results if r.session_id == sid] == ["re: second", "re: third"]
    # the other session's interrupted message is owed an answer: one continuation, no user text
    assert [(r.reply, r.state) for r in results if r.session_id == other] == [("re: hang elsewhere", "completed")]
    assert report.continued == (ledger.lane(other)[1].turn_id,)
    assert log2.started == []  # the interrupted turns' tools were never run again
    entries = second.sessions.load(sid).entries
    kinds = [e.kind for e in entries if e.turn_index == 0]
    assert "failure_note" in kinds and kinds[-1] == "turn_finished"
    assert [e.text for e in entries if e.kind == "user"] == ["hang on the first", "second", "third"]
    assert ledger.get(lane[0].turn_id).generation == 2  # fenced: the zombie's generation 1 is dead
    assert set(report.interrupted) == {lane[0].turn_id, ledger.lane(other)[0].turn_id}

    again = await second.recover(resume=True)  # idempotent
    assert (again.interrupted, again.resumed, again.steers_requeued, again.continued) == ((), (), (), ())

    # the zombie wakes up: every write it tries is refused, so nothing it says lands
    for task in (running, parked_other):
        task.cancel()
    for task in (running, parked_other):
        with pytest.raises((StaleWriterError, asyncio.CancelledError)):
            await task
    assert users(second, sid) == ["hang on the first", "second", "third"]
    assert replies(second, sid) == ["re: second", "re: third"]
    for task in parked:  # the dead process's own waiters never ran a thing
        task.cancel()
    await asyncio.gather(*parked, return_exceptions=True)
    assert [t.state for t in ledger.lane(sid)] == ["interrupted", "completed", "completed"]
    await second.close()
