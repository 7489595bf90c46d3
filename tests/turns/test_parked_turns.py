"""Issue 32: a turn whose process died while it waited on a durable approval is parked, not
interrupted: the ledger row says which approval it waits for, its transcript gets no failure
note, the final-state freeze still holds, and only one process resumes it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TURN_FINISHED, TranscriptEntry
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.restart_recovery import recover_ledger
from atomic_agent.turns.turn_answers import answer_of
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_owner import OwnerLease
from atomic_agent.turns.turn_states import PARKED, RESUMED


def _dead_running_turn(tmp_path: Path) -> tuple[SessionStore, str, str]:
    store = SessionStore(tmp_path)
    session = store.create(tmp_path)
    dead = OwnerLease(tmp_path)
    ledger = TurnLedger(store, dead.owner)
    ticket = ledger.admit(session.id, "run it", "http")
    ledger.start(ticket.turn_id, session)
    dead.release()
    return store, session.id, ticket.turn_id


def test_a_dead_turn_waiting_on_an_approval_is_parked_with_its_id_and_no_failure_note(tmp_path: Path) -> None:
    store, sid, turn_id = _dead_running_turn(tmp_path)
    me = OwnerLease(tmp_path)
    ledger = TurnLedger(store, me.owner)
    found = recover_ledger(ledger, SteerQueue(store, me.owner), me.is_alive, resume=True,
                           waiting_on=lambda turn: ["apr_0123456789abcdef"] if turn.turn_id == turn_id else [])
    assert ([t.turn_id for t in found.parked], found.interrupted) == ([turn_id], ())
    turn = ledger.get(turn_id)
    assert turn is not None and turn.state == PARKED and turn.owner == me.owner
    assert turn.reason is not None and "waiting for approval apr_0123456789abcdef" in turn.reason
    entries = store.entries(sid)
    assert not [e for e in entries if e.kind == FAILURE_NOTE]
    assert [(e.status, "apr_0123456789abcdef" in (e.reason or "")) for e in entries if e.kind == TURN_FINISHED] \
        == [("parked", True)]
    assert store.load(sid).turn_summaries()[0]["state"] == "parked"
    owed = answer_of(ledger, store, turn_id)  # what a client retrying its request is told
    assert owed.outcome == "pending" and "parked, waiting for approval apr_0123456789abcdef" in owed.message
    # the parked turn moves on only once, to `resumed`, which is frozen like every final state
    assert ledger.resume_parked(turn, "resumed from apr_0123456789abcdef deny by operator via cli",
                                [TranscriptEntry(TURN_FINISHED, 0, status=RESUMED, reason="resumed")])
    assert not ledger.resume_parked(turn, "again", [])
    resumed = ledger.get(turn_id)
    assert resumed is not None and resumed.state == RESUMED
    with pytest.raises(sqlite3.IntegrityError, match="a finalized turn cannot change"):
        store.conn.execute("update turns set state = 'running' where turn_id = ?", [turn_id])
    me.release()
    store.close()


def test_a_dead_turn_with_nothing_to_wait_on_is_still_interrupted(tmp_path: Path) -> None:
    store, _sid, turn_id = _dead_running_turn(tmp_path)
    me = OwnerLease(tmp_path)
    found = recover_ledger(TurnLedger(store, me.owner), SteerQueue(store, me.owner), me.is_alive, resume=True,
                           waiting_on=lambda _turn: [])
    assert ([t.turn_id for t in found.interrupted], found.parked) == ([turn_id], ())
    me.release()
    store.close()


def test_a_parked_turn_of_a_dead_resumer_is_claimed_by_exactly_one_process(tmp_path: Path) -> None:
    store, _sid, turn_id = _dead_running_turn(tmp_path)
    resumer = OwnerLease(tmp_path)
    recover_ledger(TurnLedger(store, resumer.owner), SteerQueue(store, resumer.owner), resumer.is_alive,
                   resume=True, waiting_on=lambda _turn: ["apr_x"])
    resumer.release()  # died while it waited for the answer
    parked = TurnLedger(store, "nobody").get(turn_id)
    assert parked is not None
    first, second = OwnerLease(tmp_path), OwnerLease(tmp_path)
    claims = [TurnLedger(store, first.owner).claim_parked(parked, "adopted"),
              TurnLedger(store, second.owner).claim_parked(parked, "adopted")]
    assert claims == [True, False]
    first.release()
    second.release()
    store.close()


def test_a_ledger_from_before_parking_is_migrated_with_its_rows(tmp_path: Path) -> None:
    from atomic_agent.sessions import session_schema
    from atomic_agent.storage.sqlite_migrations import migrate

    conn = sqlite3.connect(tmp_path / "old.sqlite", isolation_level=None)
    migrate(conn, session_schema.MIGRATIONS[:6])
    conn.execute("insert into sessions (id, created_at, updated_at, working_dir, status) values "
                 "('s', 'x', 'x', '/', 'idle')")
    conn.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, admitted_at) "
                 "values ('t1', 's', 's', 1, 'completed', 'cli', 'hi', 'x')")
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, "
                     "admitted_at) values ('t2', 's', 's', 2, 'parked', 'cli', 'hi', 'x')")
    assert migrate(conn, session_schema.MIGRATIONS) == ["m007_parked_turns"]
    conn.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, admitted_at) "
                 "values ('t2', 's', 's', 2, 'parked', 'cli', 'hi', 'x')")
    assert conn.execute("select turn_id, state from turns order by admitted_order").fetchall() == [
        ("t1", "completed"), ("t2", "parked")]
    with pytest.raises(sqlite3.IntegrityError, match="a finalized turn cannot change"):
        conn.execute("update turns set state = 'running' where turn_id = 't1'")
    indexes = {r[0] for r in conn.execute("select name from sqlite_master where type = 'index' and tbl_name = 'turns'")}
    assert {"turns_by_lane", "turns_by_state"} <= indexes
    conn.close()


async def test_a_host_closing_before_anyone_answers_leaves_the_turn_parked_and_its_approval_pending(
        tmp_path: Path) -> None:
    import asyncio

    from atomic_agent.approval.approval_records import OPERATOR, PENDING
    from atomic_agent.approval.pending_approvals import PendingApprovals
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from tests.agent.loop_harness import ToolLog, make_runtime, until
    from tests.turns.turn_kit import play_dead

    def host() -> PendingApprovals:
        return PendingApprovals(lambda _e, _t: None, 60.0, lambda: None)

    async def shown(approvals: PendingApprovals) -> str:
        await until(lambda: bool(approvals.pending()))
        return str(approvals.pending()[0]["approvalId"])

    first_host, log = host(), ToolLog()
    first = make_runtime(tmp_path, ScriptedProvider([calls(("t.gated", {"path": "ls"}))]), log, ask=first_host.ask)
    first_host.records = first.gate.records
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("run ls", session_id=sid))
    approval_id = await shown(first_host)
    play_dead(first)

    second_host = host()  # a restarted serve that is stopped again before anyone answers
    second = make_runtime(tmp_path, ScriptedProvider([]), log, ask=second_host.ask)
    second_host.records = second.gate.records
    report = await second.recover(resume=True)
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    assert len(report.parked) == 1 and await shown(second_host) == approval_id  # shown again, same id
    second_host.close()
    (result,) = await asyncio.wait_for(asyncio.gather(*report.results), 10)
    assert result.reason == "parked-waiting"
    ledger = second.lifecycle.ledger
    parked = ledger.get(report.parked[0])
    assert parked is not None and parked.state == PARKED
    assert second.gate.records.get(approval_id).state == PENDING  # type: ignore[union-attr]
    assert not [e for e in second.sessions.entries(sid) if e.kind == "tool_result"]  # not answered by the stop
    await second.close()

    third = make_runtime(tmp_path, ScriptedProvider([], default=calls(("reply", {"text": "resumed"}))), log)
    third.gate.records.answer(approval_id, "once", principal=OPERATOR, surface="cli")  # type: ignore[union-attr]
    again = await third.recover(resume=True)
    await asyncio.wait_for(asyncio.gather(*again.results), 10)
    resumed = third.lifecycle.ledger.get(report.parked[0])
    assert resumed is not None and resumed.state == RESUMED and "once by operator via cli" in (resumed.reason or "")
    results = [e for e in third.sessions.entries(sid) if e.kind == "tool_result"]
    assert [r.text for r in results] == ["ran"]
    assert [e.text for e in third.sessions.entries(sid) if e.kind == "assistant_reply"] == ["resumed"]
    await third.close()


async def test_an_approval_whose_call_was_answered_elsewhere_is_withdrawn_not_left_pending(tmp_path: Path) -> None:
    import asyncio

    from atomic_agent.approval.approval_records import CANCELLED
    from atomic_agent.approval.pending_approvals import PendingApprovals
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from atomic_agent.turns.restart_recovery import take_over_dead_turn
    from tests.agent.loop_harness import ToolLog, make_runtime, until
    from tests.turns.turn_kit import play_dead

    approvals = PendingApprovals(lambda _e, _t: None, 60.0, lambda: None)
    first = make_runtime(tmp_path, ScriptedProvider([calls(("t.gated", {"path": "ls"}))]), ToolLog(),
                         ask=approvals.ask)
    approvals.records = first.gate.records
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("run ls", session_id=sid))
    await until(lambda: bool(approvals.pending()))
    approval_id = str(approvals.pending()[0]["approvalId"])
    play_dead(first)
    # a live owner finds the lane held by the dead turn and takes it over: the call is answered
    # as interrupted (that owner runs nothing), so the record's call is no longer open
    store = SessionStore(tmp_path / "state")
    live = TurnLedger(store, "a-live-owner")
    (dead,) = live.in_state("running")
    take_over_dead_turn(live, dead)
    store.close()

    second = make_runtime(tmp_path, ScriptedProvider([]), ToolLog())
    report = await second.recover(resume=False)
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    assert report.parked == ()
    record = second.gate.records.get(approval_id)  # type: ignore[union-attr]
    assert record.state == CANCELLED and "its call was answered without it" in (record.answer_text or "")
    await second.close()


def _approvals_host() -> object:
    from atomic_agent.approval.pending_approvals import PendingApprovals

    return PendingApprovals(lambda _e, _t: None, 60.0, lambda: None)


async def _shown(approvals: object) -> str:
    from tests.agent.loop_harness import until

    await until(lambda: bool(approvals.pending()))  # type: ignore[attr-defined]
    return str(approvals.pending()[0]["approvalId"])  # type: ignore[attr-defined]


async def test_a_parked_turn_keeps_its_lane_across_processes_until_its_answer_resumes_it(tmp_path: Path) -> None:
    """Gap 1: while a restarted process holds a parked turn, a turn another live process starts
    on the same session queues behind it (its call is not answered as stranded); the answer
    from that other process runs the frozen call once, and then the queued turn runs."""
    import asyncio

    from atomic_agent.approval.approval_records import OPERATOR, PENDING
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from tests.agent.loop_harness import ToolLog, make_runtime, until
    from tests.turns.turn_kit import play_dead, replies

    first_host, log = _approvals_host(), ToolLog()
    first = make_runtime(tmp_path, ScriptedProvider([calls(("t.gated", {"path": "ls"}))]), log,
                         ask=first_host.ask)  # type: ignore[attr-defined]
    first_host.records = first.gate.records  # type: ignore[attr-defined]
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("run ls", session_id=sid))
    approval_id = await _shown(first_host)
    play_dead(first)
    first_host.close()  # type: ignore[attr-defined]  # its prompt dies with it (a zombie must not answer)

    resumer_host = _approvals_host()  # the restarted serve: parks the turn, shows the approval again
    resumer = make_runtime(tmp_path, ScriptedProvider([]), log, ask=resumer_host.ask)  # type: ignore[attr-defined]
    resumer_host.records = resumer.gate.records  # type: ignore[attr-defined]
    report = await resumer.recover(resume=True)
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    assert len(report.parked) == 1 and await _shown(resumer_host) == approval_id
    (parked_id,) = report.parked

    other = make_runtime(tmp_path, ScriptedProvider([], default=calls(("reply", {"text": "after the answer"}))), log)
    later = asyncio.ensure_future(other.run_turn("and then?", session_id=sid))
    ledger = other.lifecycle.ledger
    await until(lambda: [t.state for t in ledger.lane(sid)][-1:] == ["queued"])  # the later turn was admitted
    await asyncio.sleep(0.5)  # many lane polls: it must still wait behind the parked turn
    assert [t.state for t in ledger.lane(sid)] == ["parked", "queued"]
    assert not [e for e in other.sessions.entries(sid) if e.kind == "tool_result"]  # not answered as stranded
    assert other.gate.records.get(approval_id).state == PENDING  # type: ignore[union-attr]

    other.gate.records.answer(approval_id, "once", principal=OPERATOR, surface="cli")  # type: ignore[union-attr]
    result = await asyncio.wait_for(later, 20)
    assert result.status == "done" and replies(other, sid) == ["after the answer"]
    (resumed,) = await asyncio.wait_for(asyncio.gather(*report.results), 20)
    assert resumed.reason == "parked-settled"  # no continuation: the queued turn answered the session
    assert [(e.text, e.status) for e in other.sessions.entries(sid) if e.kind == "tool_result"] == [("ran", "ok")]
    assert [t.state for t in ledger.lane(sid)] == ["resumed", "completed"]
    done = ledger.get(parked_id)
    assert done is not None and "once by operator via cli" in (done.reason or "")
    await other.close()
    await resumer.close()


async def test_a_live_process_parks_a_dead_turn_waiting_on_an_approval_instead_of_interrupting_it(
        tmp_path: Path) -> None:
    """Gap 2: a live process (no restart) whose new turn finds the session held by a dead
    process's turn that waited on a pending approval parks that turn, shows the same
    approval again on its own surfaces, runs the frozen call once from the answer, and only
    then runs its own turn."""
    import asyncio

    from atomic_agent.approval.approval_records import OPERATOR, PENDING
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from tests.agent.loop_harness import ToolLog, make_runtime
    from tests.turns.turn_kit import play_dead, replies

    first_host, log = _approvals_host(), ToolLog()
    first = make_runtime(tmp_path, ScriptedProvider([calls(("t.gated", {"path": "ls"}))]), log,
                         ask=first_host.ask)  # type: ignore[attr-defined]
    first_host.records = first.gate.records  # type: ignore[attr-defined]
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("run ls", session_id=sid))
    approval_id = await _shown(first_host)
    play_dead(first)
    (dead_turn,) = first.lifecycle.ledger.in_state("running")

    live_host = _approvals_host()
    live = make_runtime(tmp_path, ScriptedProvider([], default=calls(("reply", {"text": "next answered"}))), log,
                        ask=live_host.ask)  # type: ignore[attr-defined]
    live_host.records = live.gate.records  # type: ignore[attr-defined]
    later = asyncio.ensure_future(live.run_turn("next", session_id=sid))
    assert await _shown(live_host) == approval_id  # the same record, shown again here
    ledger = live.lifecycle.ledger
    parked = ledger.get(dead_turn.turn_id)
    assert parked is not None and parked.state == "parked" and parked.owner == ledger.owner
    first_host.close()  # type: ignore[attr-defined]  # the dead process's prompt goes with it (now fenced)
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    assert live.gate.records.get(approval_id).state == PENDING  # type: ignore[union-attr]
    entries = live.sessions.entries(sid)
    assert not [e for e in entries if e.kind in ("failure_note", "tool_result")]  # not interrupted, not answered
    assert not later.done() and [t.state for t in ledger.lane(sid)] == ["parked", "queued"]

    live_host.answer(approval_id, "once")  # type: ignore[attr-defined]
    result = await asyncio.wait_for(later, 20)
    assert result.status == "done" and replies(live, sid) == ["next answered"]
    assert [(e.text, e.status) for e in live.sessions.entries(sid) if e.kind == "tool_result"] == [("ran", "ok")]
    assert [t.state for t in ledger.lane(sid)] == ["resumed", "completed"]
    record = live.gate.records.get(approval_id)  # type: ignore[union-attr]
    assert record.state != PENDING and record.answered_by == OPERATOR
    await live.close()


async def test_a_parked_turn_whose_resumer_died_is_claimed_and_resumed_by_the_live_turn_behind_it(
        tmp_path: Path) -> None:
    """A parked turn whose owner died too (a restarted host stopped before anyone answered)
    still holds its session: a live process whose turn queues behind it claims it, shows the
    approval again, runs the frozen call once from the answer, then runs its own turn."""
    import asyncio

    from atomic_agent.approval.approval_records import OPERATOR
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from tests.agent.loop_harness import ToolLog, make_runtime
    from tests.turns.turn_kit import play_dead, replies

    first_host, log = _approvals_host(), ToolLog()
    first = make_runtime(tmp_path, ScriptedProvider([calls(("t.gated", {"path": "ls"}))]), log,
                         ask=first_host.ask)  # type: ignore[attr-defined]
    first_host.records = first.gate.records  # type: ignore[attr-defined]
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn("run ls", session_id=sid))
    approval_id = await _shown(first_host)
    play_dead(first)
    first_host.close()  # type: ignore[attr-defined]  # its prompt dies with it (a zombie must not answer)

    resumer_host = _approvals_host()
    resumer = make_runtime(tmp_path, ScriptedProvider([]), log, ask=resumer_host.ask)  # type: ignore[attr-defined]
    resumer_host.records = resumer.gate.records  # type: ignore[attr-defined]
    report = await resumer.recover(resume=True)
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)
    (parked_id,) = report.parked
    assert await _shown(resumer_host) == approval_id
    resumer_host.close()  # type: ignore[attr-defined]
    await asyncio.wait_for(asyncio.gather(*report.results), 10)  # parked-waiting
    await resumer.close()  # its owner lease goes: the parked turn's owner is dead now

    live_host = _approvals_host()
    live = make_runtime(tmp_path, ScriptedProvider([], default=calls(("reply", {"text": "mine answered"}))), log,
                        ask=live_host.ask)  # type: ignore[attr-defined]
    live_host.records = live.gate.records  # type: ignore[attr-defined]
    later = asyncio.ensure_future(live.run_turn("mine", session_id=sid))
    assert await _shown(live_host) == approval_id
    ledger = live.lifecycle.ledger
    claimed = ledger.get(parked_id)
    assert claimed is not None and (claimed.state, claimed.owner) == ("parked", ledger.owner)
    assert not later.done() and [t.state for t in ledger.lane(sid)] == ["parked", "queued"]
    live_host.answer(approval_id, "once")  # type: ignore[attr-defined]
    result = await asyncio.wait_for(later, 20)
    assert result.status == "done" and replies(live, sid) == ["mine answered"]
    assert [(e.text, e.status) for e in live.sessions.entries(sid) if e.kind == "tool_result"] == [("ran", "ok")]
    assert [t.state for t in ledger.lane(sid)] == ["resumed", "completed"]
    assert live.gate.records.get(approval_id).answered_by == OPERATOR  # type: ignore[union-attr]
    await live.close()
