"""Every session-state backend keeps session_database's contract: the unit of work, two
processes on one database, sessions, the append-only transcript, the writer fence and the
rewrite primitives. (The ledger and the steering queue: the two sibling modules.)"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.store_errors import SessionNotFoundError, StaleWriterError
from atomic_agent.sessions.transcript_entry import (
    REPLY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_FINISHED,
    TURN_STARTED,
    USER,
    TranscriptEntry,
)
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.turns.turn_repository import SteerRepository, TurnRepository
from tests.sessions.session_backends import OpenedBackend

WORK = Path("/work")
CLOSING = ("done", "cancelled")


class Boom(BaseException):
    """Not an Exception: a crash or a cancellation must roll back just the same."""


def _user(text: str, turn: int = 0) -> TranscriptEntry:
    return TranscriptEntry(USER, turn, text=text)


def _texts(store: SessionRepository, session_id: str) -> list[str]:
    return [e.text for e in store.entries(session_id)]


def test_every_repository_satisfies_its_protocol(session_backend: OpenedBackend):
    store = session_backend.open()
    assert isinstance(store, SessionRepository)
    assert isinstance(store.fenced(TurnGuard("t", 1)), SessionRepository)
    assert isinstance(session_backend.ledger(store), TurnRepository)
    assert isinstance(session_backend.steers(store), SteerRepository)


# -- the unit of work --------------------------------------------------------------------------
def test_a_transaction_that_raises_leaves_nothing_behind(session_backend: OpenedBackend):
    store = session_backend.open()
    kept = store.create(WORK)
    store.append(kept, [_user("kept")])
    ledger, steers = session_backend.ledger(store), session_backend.steers(store)
    with pytest.raises(Boom):
        with store.write() as handle:  # every write below joins this one transaction
            created = store.create(WORK)
            store.append(kept, [_user("lost")])
            store.delete_rows(handle, kept.id, after_seq=-1)
            ticket = ledger.admit(kept.id, "lost", "cli")
            steers.enqueue(kept.id, ticket.turn_id, "lost")
            raise Boom
    for view in (store, session_backend.open()):
        assert not view.exists(created.id) and _texts(view, kept.id) == ["kept"]
    assert ledger.lane(kept.id) == [] and ledger.audit_rows() == []
    assert steers.left_by(lambda owner: False) == []


def test_reads_inside_a_transaction_see_its_writes_and_other_processes_see_only_commits(
        session_backend: OpenedBackend):
    mine, other = session_backend.open(), session_backend.open()
    with mine.write():
        session = mine.create(WORK)
        mine.append(session, [_user("draft")])
        assert mine.exists(session.id) and _texts(mine, session.id) == ["draft"]
        assert not other.exists(session.id) and _texts(other, session.id) == []
    assert other.exists(session.id) and _texts(other, session.id) == ["draft"]


def test_two_store_objects_on_one_database_see_each_others_commits(session_backend: OpenedBackend):
    one, two = session_backend.open(), session_backend.open()
    session = one.create(WORK)
    one.append(session, [_user("from one")])
    two.append(two.load(session.id), [TranscriptEntry(REPLY, 0, text="from two")])
    assert _texts(one, session.id) == ["from one", "from two"]
    ticket = session_backend.ledger(two, "b").admit(session.id, "queued by two", "cli")
    found = session_backend.ledger(one, "a").get(ticket.turn_id)
    assert found is not None and (found.text, found.owner) == ("queued by two", "b")
    steer_id = session_backend.steers(one).enqueue(session.id, ticket.turn_id, "steer from one")
    assert session_backend.steers(two).peek([steer_id]) == ["steer from one"]


def test_committed_state_survives_a_reopen(session_backend: OpenedBackend):
    store = session_backend.open()
    state = store.create(WORK / "work", title="first")
    store.append(state, [_user("héllo \u2603"), TranscriptEntry(TOOL_CALL, 0, tool="t", args={"a": [1, 2]},
                                                                reasoning="why", step=0, batch_index=0)])
    state.loaded_tools, state.known_facts, state.status = ["x"], ["fact"], "finished"
    store.save_state(state)
    store.close()
    again = session_backend.open().load(state.id)
    assert [e.text for e in again.entries] == ["héllo \u2603", ""] and [e.seq for e in again.entries] == [0, 1]
    assert (again.entries[1].args, again.entries[1].reasoning) == ({"a": [1, 2]}, "why")
    assert (again.loaded_tools, again.known_facts, again.status) == (["x"], ["fact"], "finished")
    assert (again.working_dir, again.title, again.created_at) == (WORK / "work", "first", state.created_at)


def test_catch_up_adds_what_another_writer_appended_and_reloads_a_rewritten_transcript(
        session_backend: OpenedBackend):
    mine, other = session_backend.open(), session_backend.open()
    state = mine.create(WORK)
    mine.append(state, [_user("one")])
    held = mine.load(state.id)
    mine.catch_up(held)  # nothing new: the held rows stand
    assert [e.text for e in held.entries] == ["one"]
    other.append(other.load(state.id), [_user("two"), _user("three")])
    mine.catch_up(held)
    assert [(e.text, e.seq) for e in held.entries] == [("one", 0), ("two", 1), ("three", 2)]
    with other.write() as handle:  # a rewrite (what compaction does): the held rows are stale
        other.delete_rows(handle, state.id, upto_seq=1)
    mine.catch_up(held)
    assert [(e.text, e.seq) for e in held.entries] == [("three", 2)]
    assert [e.text for e in mine.load(state.id).entries] == ["three"]


def test_catch_up_inside_a_write_that_rolls_back_leaves_nothing_cached(session_backend: OpenedBackend):
    mine, other = session_backend.open(), session_backend.open()
    state = mine.create(WORK)
    mine.append(state, [_user("one")])
    held = mine.load(state.id)
    with pytest.raises(Boom):
        with mine.write():
            mine.append(mine.load(state.id), [_user("lost")])
            mine.catch_up(held)
            assert [e.text for e in held.entries] == ["one", "lost"]
            raise Boom
    other.append(other.load(state.id), [_user("two")])
    assert [e.text for e in mine.load(state.id).entries] == ["one", "two"]


# -- sessions ----------------------------------------------------------------------------------
def test_an_unknown_session_is_refused_by_name(session_backend: OpenedBackend):
    store = session_backend.open()
    with pytest.raises(SessionNotFoundError, match="sessions list"):
        store.load("nope")
    with pytest.raises(SessionNotFoundError):
        store.delete("nope")
    assert not store.exists("nope") and store.entries("nope") == []


def test_delete_takes_the_transcript_turns_and_steers_along_but_keeps_the_audit(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    steers = session_backend.steers(store)
    steers.enqueue(session.id, started.turn_id, "steer")
    other = store.create(WORK)
    store.append(other, [_user("kept")])
    store.delete(session.id)
    assert not store.exists(session.id) and store.entries(session.id) == []
    assert ledger.get(started.turn_id) is None and steers.left_by(lambda owner: False) == []
    assert [r["to_state"] for r in ledger.audit_rows(started.turn_id)] == ["queued", "running"]
    assert _texts(store, other.id) == ["kept"] and store.session_ids() == [other.id]


def test_list_puts_the_most_recently_used_first_and_session_ids_keep_creation_order(session_backend: OpenedBackend):
    store = session_backend.open()
    old = store.create(WORK, title="old")
    time.sleep(0.005)  # timestamps have millisecond resolution
    new = store.create(WORK, title="new")
    time.sleep(0.005)
    store.append(old, [TranscriptEntry(TURN_STARTED, 0), _user("again")])
    rows = store.list()
    assert [(r["id"], r["title"], r["turns"]) for r in rows] == [(old.id, "old", 1), (new.id, "new", 0)]
    assert [r["id"] for r in store.list(limit=1)] == [old.id]
    assert store.session_ids() == [old.id, new.id]


# -- the append-only transcript ----------------------------------------------------------------
def test_appends_get_increasing_seq_per_session(session_backend: OpenedBackend):
    store = session_backend.open()
    a, b = store.create(WORK), store.create(WORK)
    first = store.append(a, [_user("a0"), _user("a1")])
    store.append(b, [_user("b0")])
    second = store.append(a, [_user("a2")])
    assert [e.seq for e in first + second] == [0, 1, 2] and all(e.created_at for e in first + second)
    assert [e.seq for e in store.entries(b.id)] == [0]
    assert store.entries(a.id) == first + second  # what append returned is what is stored


def test_seq_comes_from_the_store_not_from_a_stale_copy(session_backend: OpenedBackend):
    one, two = session_backend.open(), session_backend.open()
    session = one.create(WORK)
    stale = two.load(session.id)
    one.append(session, [_user("first")])
    two.append(stale, [_user("second")])  # its copy never saw "first"
    assert [(e.seq, e.text) for e in one.entries(session.id)] == [(0, "first"), (1, "second")]


def test_appended_rows_are_never_rewritten_by_later_writes(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    store.append(session, [_user("one"), TranscriptEntry(TOOL_CALL, 0, tool="t", args={}, step=0, batch_index=0)])
    with store.write() as handle:
        before = store.raw_rows(handle, session.id, -1)
    store.append(session, [TranscriptEntry(REPLY, 0, text="two")])
    session.title = "renamed"
    store.save_state(session)
    with store.write() as handle:
        assert store.raw_rows(handle, session.id, -1)[:len(before)] == before


def test_the_database_refuses_to_update_a_transcript_row(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    store.append(session, [_user("original")])
    with pytest.raises(session_backend.refusal, match="append-only"):
        session_backend.raw(store, "update transcript set text = 'rewritten'")
    assert _texts(store, session.id) == ["original"]


# -- the writer fence --------------------------------------------------------------------------
def test_a_fenced_write_by_a_stale_generation_is_refused_and_writes_nothing(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    ahead = TurnGuard(started.turn_id, started.guard.generation + 1)
    with pytest.raises(StaleWriterError):  # running, but not at this writer's generation
        store.append(session, [TranscriptEntry(REPLY, 0, text="wrong generation")], guard=ahead)
    with pytest.raises(StaleWriterError):
        store.fenced(TurnGuard("no-such-turn", 1)).append(session, [_user("nobody's")])
    ledger.finalize(started.guard, session, [TranscriptEntry(TURN_FINISHED, 0, status="done", reason="reply")],
                    "completed", "reply", None, "answer")
    final = store.entries(session.id)
    fenced = store.fenced(started.guard)
    with pytest.raises(StaleWriterError):
        fenced.append(session, [TranscriptEntry(REPLY, 0, text="too late")])
    session.title = "too late"
    with pytest.raises(StaleWriterError):
        fenced.save_state(session)
    assert store.entries(session.id) == final and store.load(session.id).title == ""


def test_a_fenced_write_by_the_running_generation_lands(session_backend: OpenedBackend):
    store = session_backend.open()
    session, _, started = session_backend.started(store)
    fenced = store.fenced(started.guard)
    assert fenced.guard == started.guard and store.guard is None
    fenced.append(session, [TranscriptEntry(REPLY, started.turn_index, text="on time")])
    session.title = "kept"
    fenced.save_state(session)
    with fenced.write() as handle:
        fenced.check_fence(handle, started.guard)
    assert _texts(store, session.id)[-1] == "on time" and store.load(session.id).title == "kept"


def test_running_turn_indexes_name_only_turns_the_ledger_holds_running(session_backend: OpenedBackend):
    store = session_backend.open()
    session, ledger, started = session_backend.started(store)
    assert session_backend.open().running_turn_indexes(session.id) == {started.turn_index}  # any process sees it
    ledger.finalize(started.guard, session, [], "completed", "reply", None, "answer")
    assert store.running_turn_indexes(session.id) == set()


# -- the rewrite primitives --------------------------------------------------------------------
def test_a_rewrite_moves_rows_with_every_column_and_inserts_beside_them(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    store.append(session, [TranscriptEntry(TOOL_CALL, 0, tool="t", args={"p": 1}, step=0, batch_index=0),
                           _user("later"), TranscriptEntry(REPLY, 0, text="r", reasoning="why", details={"d": [1]})])
    stamp, touched = "2026-01-01T00:00:00.000+00:00", "2099-01-01T00:00:00.000+00:00"
    with store.write() as handle:
        moved = store.raw_rows(handle, session.id, 0)
        assert store.delete_rows(handle, session.id, after_seq=0) == 2
        store.insert_entry(handle, session.id, TranscriptEntry(TOOL_RESULT, 0, text="ok", tool="t", status="ok",
                                                               details={"x": 1}, step=0, batch_index=0), 1, stamp)
        for offset, row in enumerate(moved):
            store.insert_raw_row(handle, row, 2 + offset)
        store.touch(handle, session.id, touched)
    with store.write() as handle:
        after = store.raw_rows(handle, session.id, 1)
    assert [{**r, "seq": 0} for r in after] == [{**r, "seq": 0} for r in moved] and [r["seq"] for r in after] == [2, 3]
    entries = store.entries(session.id)
    assert [e.kind for e in entries] == [TOOL_CALL, TOOL_RESULT, USER, REPLY]
    assert (entries[1].created_at, entries[1].details, entries[3].details) == (stamp, {"x": 1}, {"d": [1]})
    assert store.list()[0]["updated_at"] == touched


def test_delete_rows_removes_exactly_the_range_asked_for(session_backend: OpenedBackend):
    store = session_backend.open()
    session, other = store.create(WORK), store.create(WORK)
    store.append(session, [_user(str(i)) for i in range(4)])
    store.append(other, [_user("other")])
    with store.write() as handle:
        assert store.delete_rows(handle, session.id, upto_seq=1) == 2
    assert [e.seq for e in store.entries(session.id)] == [2, 3]
    with store.write() as handle:
        assert store.delete_rows(handle, session.id, after_seq=2) == 1
    assert [e.seq for e in store.entries(session.id)] == [2] and _texts(store, other.id) == ["other"]


def test_answered_batch_indexes_name_the_calls_of_a_step_that_have_a_result(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    store.append(session, [TranscriptEntry(TOOL_CALL, 0, tool="t", step=0, batch_index=i) for i in range(3)]
                 + [TranscriptEntry(TOOL_RESULT, 0, tool="t", status="ok", step=0, batch_index=i) for i in (0, 2)]
                 + [TranscriptEntry(TOOL_RESULT, 0, tool="t", status="ok", step=1, batch_index=1)])
    with store.write() as handle:
        assert store.answered_batch_indexes(handle, session.id, 0, 0) == {0, 2}
        assert store.answered_batch_indexes(handle, session.id, 0, 1) == {1}
        assert store.answered_batch_indexes(handle, session.id, 1, 0) == set()


def test_last_answerable_kind_skips_bookkeeping_rows(session_backend: OpenedBackend):
    store = session_backend.open()
    session = store.create(WORK)
    assert store.last_answerable_kind(session.id, CLOSING) is None
    store.append(session, [TranscriptEntry(TURN_STARTED, 0)])
    assert store.last_answerable_kind(session.id, CLOSING) is None
    store.append(session, [_user("question")])
    assert store.last_answerable_kind(session.id, CLOSING) == USER
    store.append(session, [TranscriptEntry(TURN_FINISHED, 0, status="failed", reason="failed")])
    assert store.last_answerable_kind(session.id, CLOSING) == USER  # a failed turn did not close the question
    store.append(session, [TranscriptEntry(TURN_FINISHED, 0, status="done", reason="reply")])
    assert store.last_answerable_kind(session.id, CLOSING) == TURN_FINISHED
