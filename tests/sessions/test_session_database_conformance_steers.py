"""Every backend's steering queue keeps turn_repository's contract: ids never reused, claim by
delete (of two claimers exactly one gets the text), claim and record in one transaction,
handed-back steers kept until re-sent or dismissed."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.transcript_entry import USER, TranscriptEntry
from atomic_agent.turns.turn_repository import SteerRepository
from tests.sessions.session_backends import OpenedBackend
from tests.sessions.thread_race import race

WORK = Path("/work")


class Boom(BaseException):
    pass


def _queue(session_backend: OpenedBackend, owner: str = "a") -> tuple[SessionRepository, SteerRepository, str]:
    store = session_backend.open()
    return store, session_backend.steers(store, owner), store.create(WORK).id


def _everything(steers: SteerRepository) -> list[str]:
    return [s.text for s in steers.left_by(lambda owner: False)]


def test_steer_ids_increase_and_are_never_reused_after_a_restart(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    ids = [steers.enqueue(sid, "t1", text) for text in ("a", "b")]
    with store.write() as handle:
        steers.claim(handle, [ids[-1]])  # the newest row is gone: its id must not come back
    store.close()
    again = session_backend.steers(session_backend.open())
    later = again.enqueue(sid, "t1", "c")
    assert ids[0] < ids[1] < later
    assert session_backend.steers(session_backend.open(), "b").enqueue(sid, "t1", "d") > later


def test_of_two_claimers_exactly_one_gets_the_text(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    steer_id = steers.enqueue(sid, "t1", "only once")

    def claim(queue: SteerRepository) -> list[str]:
        with queue.store.write() as handle:
            return queue.claim(handle, [steer_id])

    queues = [steers, session_backend.steers(session_backend.open(), "b")]
    won = race(*(lambda q=queue: claim(q) for queue in queues))
    assert sorted(won) == [[], ["only once"]] and _everything(steers) == []


def test_consume_claims_and_records_in_one_transaction(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    steer_id = steers.enqueue(sid, "t1", "keep me")

    def record(texts: list[str]) -> None:
        store.append(store.load(sid), [TranscriptEntry(USER, 0, text=t) for t in texts])

    def record_then_fail(texts: list[str]) -> None:
        record(texts)
        raise RuntimeError("the transcript write failed")

    with pytest.raises(RuntimeError):
        steers.consume([steer_id], record_then_fail)
    assert _everything(steers) == ["keep me"] and store.entries(sid) == []  # neither half happened
    assert steers.consume([steer_id], record) == ["keep me"]
    assert _everything(steers) == [] and [e.text for e in store.entries(sid)] == ["keep me"]


def test_consume_skips_a_steer_another_process_claimed_first(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    steer_id = steers.enqueue(sid, "t1", "once")
    other = session_backend.steers(session_backend.open(), "b")
    with other.store.write() as handle:
        assert other.claim(handle, [steer_id]) == ["once"]
    recorded: list[list[str]] = []
    assert steers.consume([steer_id], recorded.append) == [] and recorded == []


def test_handed_back_steers_stay_until_resent_or_dismissed(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    ids = [steers.enqueue(sid, "t1", text) for text in ("resend me", "dismiss me")]
    assert steers.hand_back(ids, "t1") == ids
    store.close()
    store = session_backend.open()  # a restart keeps them
    steers = session_backend.steers(store)
    handed_back = [(s.steer_id, s.text) for s in steers.handed_back_by("t1")]
    assert handed_back == list(zip(ids, ["resend me", "dismiss me"], strict=True))
    with store.write() as handle:
        assert steers.take_handed_back(handle, ids[0]) == "resend me"
    with store.write() as handle:
        assert steers.take_handed_back(handle, str(ids[0])) is None  # re-sent once, never twice
    assert steers.dismiss(str(ids[1])) and not steers.dismiss(ids[1])
    assert steers.handed_back_by("t1") == [] and _everything(steers) == []


def test_undelivered_to_an_ended_turn_includes_steers_whose_hand_back_failed(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    ids = [steers.enqueue(sid, "t1", text) for text in ("handed back", "never marked", "consumed")]
    other = steers.enqueue(sid, "t2", "another turn's")
    steers.hand_back(ids[:1], "t1")
    steers.consume(ids[2:], lambda texts: None)
    assert [(s.steer_id, s.text) for s in steers.undelivered_to("t1")] == [(ids[0], "handed back"),
                                                                         (ids[1], "never marked")]
    assert [s.steer_id for s in steers.undelivered_to("t2")] == [other]


def test_a_resend_that_rolls_back_leaves_the_steer_handed_back(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    steer_id = steers.enqueue(sid, "t1", "still here")
    steers.hand_back([steer_id], "t1")
    with pytest.raises(Boom):
        with store.write() as handle:
            assert steers.take_handed_back(handle, steer_id) == "still here"
            raise Boom
    assert [s.text for s in steers.handed_back_by("t1")] == ["still here"]


def test_only_a_handed_back_steer_can_be_resent_or_dismissed(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    steer_id = steers.enqueue(sid, "t1", "pending")
    with store.write() as handle:
        assert steers.take_handed_back(handle, steer_id) is None
    assert not steers.dismiss(steer_id) and _everything(steers) == ["pending"]


def test_hand_back_reports_only_the_steers_still_queued(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    consumed, kept = steers.enqueue(sid, "t1", "consumed"), steers.enqueue(sid, "t1", "kept")
    steers.consume([consumed], lambda texts: None)
    assert steers.hand_back([consumed, kept], "t1") == [kept]
    assert steers.hand_back([], "t1") == []


def test_left_by_lists_only_the_steers_of_owners_not_alive(session_backend: OpenedBackend):
    store, mine, sid = _queue(session_backend, "alive")
    theirs = session_backend.steers(store, "dead")
    mine.enqueue(sid, "t1", "mine")
    orphan = theirs.enqueue(sid, "t2", "orphan")
    left = mine.left_by(lambda owner: owner == "alive")
    assert [(s.steer_id, s.session_id, s.turn_id, s.text, s.owner) for s in left] == [
        (orphan, sid, "t2", "orphan", "dead")]


def test_peek_reads_without_claiming(session_backend: OpenedBackend):
    store, steers, sid = _queue(session_backend)
    ids = [steers.enqueue(sid, "t1", text) for text in ("one", "two")]
    assert steers.peek(list(reversed(ids))) == ["one", "two"] and steers.peek([ids[1] + 100]) == []
    assert _everything(steers) == ["one", "two"]
