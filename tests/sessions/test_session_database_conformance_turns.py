"""Every backend's turn ledger keeps turn_repository's contract: admission order from the
database, compare-and-set state moves (two racers, exactly one wins), the lane rule,
generation fencing, frozen final states and an audit nobody can rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.store_errors import SessionNotFoundError, StaleWriterError
from atomic_agent.sessions.transcript_entry import TURN_FINISHED, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.turns.turn_states import LaneBusy, StartedTurn
from tests.sessions.session_backends import OpenedBackend
from tests.sessions.thread_race import race

WORK = Path("/work")


class Boom(BaseException):
    pass


def _finished(index: int = 0) -> list[TranscriptEntry]:
    return [TranscriptEntry(TURN_FINISHED, index, status="done", reason="reply")]


def test_admission_order_increases_across_processes_and_restarts(session_backend: OpenedBackend):
    store = session_backend.open()
    sid = store.create(WORK).id
    first = session_backend.ledger(store, "a").admit(sid, "one", "cli")
    second = session_backend.ledger(session_backend.open(), "b").admit(sid, "two", "http")
    store.close()
    third = session_backend.ledger(session_backend.open(), "c").admit(sid, "three", "cli")
    assert [t.admitted_order for t in (second, third)] == [first.admitted_order + 1, first.admitted_order + 2]
    assert [t.position for t in (first, second, third)] == [0, 1, 2]  # live turns ahead in the lane


def test_admit_refuses_an_unknown_session_and_writes_nothing(session_backend: OpenedBackend):
    ledger = session_backend.ledger(session_backend.open())
    with pytest.raises(SessionNotFoundError):
        ledger.admit("nope", "lost", "cli")
    assert ledger.in_state("queued") == [] and ledger.audit_rows() == []


def test_admit_in_commits_or_rolls_back_with_the_callers_transaction(session_backend: OpenedBackend):
    store = session_backend.open()
    sid = store.create(WORK).id
    ledger = session_backend.ledger(store)
    with pytest.raises(Boom):
        with store.write() as handle:
            ledger.admit_in(handle, sid, "lost", "cli", sid, "t-lost")
            raise Boom
    with store.write() as handle:
        ticket = ledger.admit_in(handle, sid, "kept", "cli", sid, "t-kept")
    assert [t.turn_id for t in ledger.lane(sid)] == [ticket.turn_id] == ["t-kept"]
    assert [r["turn_id"] for r in ledger.audit_rows()] == ["t-kept"]


def test_start_opens_the_turn_with_its_rows_under_a_new_generation(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store, "hello")
    turn = ledger.get(started.turn_id)
    assert turn is not None and (turn.state, turn.generation, turn.turn_index) == ("running", 1, 0)
    assert (started.guard.generation, started.turn_index) == (1, 0)
    assert [(e.kind, e.text) for e in store.entries(session.id)] == [(TURN_STARTED, ""), (USER, "hello")]


def test_start_is_compare_and_set_two_racers_exactly_one_starts(session_backend: OpenedBackend):
    one, two = session_backend.open(), session_backend.open()
    sid = one.create(WORK).id
    ticket = session_backend.ledger(one, "a").admit(sid, "once", "cli")
    ledgers = [session_backend.ledger(one, "a"), session_backend.ledger(two, "b")]
    outcomes = race(*(lambda lg=ledger: lg.start(ticket.turn_id, lg.store.load(sid)) for ledger in ledgers))
    assert sorted(type(o).__name__ for o in outcomes) == ["NoneType", "StartedTurn"]
    assert [e.kind for e in one.entries(sid)].count(TURN_STARTED) == 1
    assert [r["to_state"] for r in ledgers[0].audit_rows(ticket.turn_id)] == ["queued", "running"]


def test_a_turn_starts_only_as_the_oldest_live_turn_of_its_lane(session_backend: OpenedBackend):
    store = session_backend.open()
    session, other = store.create(WORK), store.create(WORK)
    ledger = session_backend.ledger(store)
    older, newer = ledger.admit(session.id, "older", "cli"), ledger.admit(session.id, "newer", "cli")
    busy = ledger.start(newer.turn_id, session)
    assert isinstance(busy, LaneBusy) and busy.blocker.turn_id == older.turn_id
    assert store.entries(session.id) == [] and ledger.get(newer.turn_id).state == "queued"  # nothing written
    assert isinstance(ledger.start(older.turn_id, session), StartedTurn)
    busy = session_backend.ledger(session_backend.open(), "b").start(newer.turn_id, store.load(session.id))
    assert isinstance(busy, LaneBusy) and busy.blocker.state == "running"  # another owner is held back too
    assert isinstance(ledger.start(ledger.admit(other.id, "own lane", "cli").turn_id, other), StartedTurn)


def test_send_mode_all_merges_every_queued_turn_of_the_lane_in_one_transaction(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    ledger = session_backend.ledger(store)
    tickets = [ledger.admit(session.id, text, "cli") for text in ("a", "b", "c")]
    started = ledger.start(tickets[0].turn_id, session, "all")
    assert isinstance(started, StartedTurn) and [m[1] for m in started.merged] == ["b", "c"]
    assert [(t.state, t.merged_into) for t in ledger.lane(session.id)][1:] == [("merged", tickets[0].turn_id)] * 2
    assert [e.text for e in store.entries(session.id) if e.kind == USER] == ["a", "b", "c"]


def test_adopt_is_compare_and_set_two_owners_exactly_one_adopts(session_backend: OpenedBackend):
    one, two = session_backend.open(), session_backend.open()
    sid = one.create(WORK).id
    orphan = session_backend.ledger(one, "dead").admit(sid, "orphan", "cli")
    turn = session_backend.ledger(one).get(orphan.turn_id)
    ledgers = [session_backend.ledger(one, "a"), session_backend.ledger(two, "b")]
    won = race(*(lambda lg=ledger: lg.adopt(turn, "adopted") for ledger in ledgers))
    assert sorted(won) == [False, True]
    assert ledgers[0].get(orphan.turn_id).owner == ("a" if won[0] else "b")
    assert [r["reason"] for r in ledgers[0].audit_rows(orphan.turn_id)] == ["cli", "adopted"]


def test_interrupt_is_compare_and_set_and_fences_the_old_writer_out(session_backend: OpenedBackend):
    one, two = session_backend.open(), session_backend.open()
    session, ledger, started = session_backend.started(one)
    turn = ledger.get(started.turn_id)

    def interrupt(store, owner):  # type: ignore[no-untyped-def]
        with store.write() as handle:
            return session_backend.ledger(store, owner).interrupt_in(handle, turn, "its owner died")

    assert sorted(race(lambda: interrupt(one, "a"), lambda: interrupt(two, "b"))) == [False, True]
    after = ledger.get(started.turn_id)
    assert (after.state, after.generation) == ("interrupted", started.guard.generation + 1)
    with pytest.raises(StaleWriterError):
        one.fenced(started.guard).append(session, [TranscriptEntry(USER, 0, text="zombie")])
    assert [e.text for e in one.entries(session.id)] == ["", "hi"]


def test_finalize_by_a_stale_guard_is_refused_and_writes_nothing(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    stale = TurnGuard(started.turn_id, started.guard.generation - 1)
    with pytest.raises(StaleWriterError):
        ledger.finalize(stale, session, _finished(), "completed", "reply", None, "answer")
    assert ledger.get(started.turn_id).state == "running" and len(store.entries(session.id)) == 2
    assert [r["to_state"] for r in ledger.audit_rows(started.turn_id)] == ["queued", "running"]


def test_a_finalized_turn_is_frozen(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    ledger.finalize(started.guard, session, _finished(), "completed", "reply", None, "answer")
    frozen = ledger.get(started.turn_id)
    assert frozen.state == "completed" and frozen.response_hash
    with pytest.raises(StaleWriterError):
        ledger.finalize(started.guard, session, _finished(), "failed", "failed", None, "other")
    assert ledger.start(started.turn_id, session) is None
    assert not ledger.cancel_queued(started.turn_id, "late") and not ledger.adopt(frozen, "late")
    assert not ledger.interrupt_unfinalized(started.guard, "late")
    with store.write() as handle:
        assert not ledger.interrupt_in(handle, frozen, "late")
    with pytest.raises(session_backend.refusal, match="finalized"):  # even a write that skips every check
        session_backend.raw(store, "update turns set response_hash = 'x' where turn_id = ?", started.turn_id)
    assert ledger.get(started.turn_id) == frozen


def test_every_transition_leaves_one_audit_row_in_order(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    ledger.finalize(started.guard, session, _finished(), "completed", "reply", None, "answer")
    rows = ledger.audit_rows(started.turn_id)
    assert [(r["from_state"], r["to_state"], r["generation"], r["owner"]) for r in rows] == [
        (None, "queued", 0, "a"), ("queued", "running", 1, "a"), ("running", "completed", 1, "a")]
    assert all(r["at"] for r in rows)


def test_the_audit_log_refuses_rewrites(session_backend: OpenedBackend):
    store = session_backend.open()
    sid = store.create(WORK).id
    ledger = session_backend.ledger(store)
    ticket = ledger.admit(sid, "one", "cli")
    before = ledger.audit_rows()
    for sql in ("update turn_audit set to_state = 'completed'", "delete from turn_audit"):
        with pytest.raises(session_backend.refusal, match="append-only"):
            session_backend.raw(store, sql)
    assert ledger.audit_rows() == before and [r["to_state"] for r in before] == ["queued"]
    assert ledger.audit_rows(ticket.turn_id) == before


def test_interrupt_unfinalized_frees_the_lane_without_transcript_rows(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    assert ledger.interrupt_unfinalized(started.guard, "the final write failed")
    assert not ledger.interrupt_unfinalized(started.guard, "again")
    assert ledger.get(started.turn_id).state == "interrupted" and len(store.entries(session.id)) == 2
    assert isinstance(ledger.start(ledger.admit(session.id, "next", "cli").turn_id, session), StartedTurn)


def test_cancel_queued_only_cancels_a_turn_still_queued(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    waiting = ledger.admit(session.id, "waiting", "cli")
    assert not ledger.cancel_queued(started.turn_id, "too late")
    assert ledger.cancel_queued(waiting.turn_id, "withdrawn") and not ledger.cancel_queued(waiting.turn_id, "again")
    assert [t.state for t in ledger.lane(session.id)] == ["running", "cancelled"]


def test_mark_settled_takes_an_interruption_off_the_unsettled_list(session_backend: OpenedBackend):
    store = session_backend.open()
    _, ledger, started = session_backend.started(store)
    ledger.interrupt_unfinalized(started.guard, "died")
    interrupted = ledger.get(started.turn_id)
    assert [t.turn_id for t in ledger.unsettled_interruptions()] == [started.turn_id]
    ledger.mark_settled(interrupted)
    assert ledger.unsettled_interruptions() == [] and ledger.get(started.turn_id) == interrupted


def test_requeue_in_admits_a_queued_turn_for_the_given_owner(session_backend: OpenedBackend):
    store = session_backend.open()
    sid = store.create(WORK).id
    ledger = session_backend.ledger(store, "recoverer")
    with store.write() as handle:
        ticket = ledger.requeue_in(handle, sid, "steered", "http", sid, "steer 1 was never delivered", None)
    turn = ledger.get(ticket.turn_id)
    assert (turn.state, turn.text, turn.origin, turn.owner) == ("queued", "steered", "http", None)
    assert [r["reason"] for r in ledger.audit_rows(ticket.turn_id)] == ["http", "steer 1 was never delivered"]


def test_has_live_turn_follows_the_lanes_queued_and_running_turns(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    ledger = session_backend.ledger(store)
    assert not ledger.has_live_turn(session.id)
    ticket = ledger.admit(session.id, "one", "cli")
    assert ledger.has_live_turn(session.id) and [t.turn_id for t in ledger.in_state("queued")] == [ticket.turn_id]
    started = ledger.start(ticket.turn_id, session)
    assert ledger.has_live_turn(session.id) and [t.turn_id for t in ledger.in_state("running")] == [ticket.turn_id]
    ledger.finalize(started.guard, session, [], "completed", "reply", None, "answer")
    assert not ledger.has_live_turn(session.id) and ledger.in_state("queued", "running") == []


def test_a_parked_turn_is_fenced_claimed_once_and_resumed_frozen(session_backend: OpenedBackend):
    """The parked-approval path on every backend: running -> parked bumps the generation (the
    dead writer is fenced out), exactly one process claims a dead owner's parked turn, only its
    owner resumes it with its closing rows, and a resumed turn is as final as any other."""
    store = session_backend.open()
    session, ledger, started = session_backend.started(store, "delete the branch")
    turn = ledger.get(started.turn_id)
    with store.write() as handle:
        assert ledger.park_in(handle, turn, "waiting for approval apr_1")
    parked = ledger.get(started.turn_id)
    assert (parked.state, parked.generation, parked.reason) == ("parked", 2, "waiting for approval apr_1")
    with pytest.raises(StaleWriterError):  # the dead process's writer is fenced out
        store.append(store.load(session.id), _finished(), guard=started.guard)
    with store.write() as handle:
        assert not ledger.park_in(handle, turn, "again")  # it moved: nothing written
    claimers = [session_backend.ledger(session_backend.open(), owner) for owner in ("b", "c")]
    outcomes = race(*(lambda lg=lg: lg.claim_parked(parked, "adopted") for lg in claimers))
    assert sorted(outcomes) == [False, True]
    winner = claimers[outcomes.index(True)]
    assert not ledger.resume_parked(parked, "answered", _finished())  # not its owner any more
    assert winner.resume_parked(winner.get(parked.turn_id), "approval apr_1 approved", _finished())
    done = ledger.get(started.turn_id)
    assert done.state == "resumed" and not winner.resume_parked(done, "twice", _finished())
    assert [e.kind for e in store.entries(session.id)].count(TURN_FINISHED) == 1
    assert [r["to_state"] for r in ledger.audit_rows(started.turn_id)][-3:] == ["parked", "parked", "resumed"]


def test_a_parked_turn_keeps_its_lane_and_later_turns_queue_behind_it_fifo(session_backend: OpenedBackend):
    """Issue 32: a parked turn holds its session's lane in every process until it is resumed:
    a turn another process admits meanwhile counts it as ahead, cannot start (LaneBusy names
    the parked turn), and the turns queued behind it start in admission order once it is."""
    store = session_backend.open()
    session, ledger, started = session_backend.started(store, "delete the branch")
    with store.write() as handle:
        assert ledger.park_in(handle, ledger.get(started.turn_id), "waiting for approval apr_1")
    assert ledger.has_live_turn(session.id)
    other = session_backend.ledger(session_backend.open(), "another-process")
    first = other.admit(session.id, "one", "http")
    second = other.admit(session.id, "two", "http")
    assert (first.position, second.position) == (1, 2)  # the parked turn is ahead of both
    for ticket in (first, second):
        busy = other.start(ticket.turn_id, other.store.load(session.id))
        assert isinstance(busy, LaneBusy) and (busy.blocker.turn_id, busy.blocker.state) == (started.turn_id, "parked")
    assert [t.state for t in other.lane(session.id)] == ["parked", "queued", "queued"]  # nothing written
    assert ledger.resume_parked(ledger.get(started.turn_id), "approval apr_1 approved", _finished())
    busy = other.start(second.turn_id, other.store.load(session.id))
    assert isinstance(busy, LaneBusy) and busy.blocker.turn_id == first.turn_id  # FIFO behind it
    assert isinstance(other.start(first.turn_id, other.store.load(session.id)), StartedTurn)
