"""Delivery records: written before the send, pending -> attempting -> delivered | failed |
uncertain, chunk evidence kept; what a dead process left mid-send becomes uncertain."""

from __future__ import annotations

from atomic_agent.plugins.telegram.delivery_store import (
    ATTEMPTING,
    DELIVERED,
    FAILED,
    PENDING,
    UNCERTAIN,
    DeliveryStore,
)


def test_a_reply_obligation_exists_before_its_text_and_is_one_per_turn(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    first = store.open_reply("turn-1", 42, "s1")
    again = store.open_reply("turn-1", 42, "s1")
    assert first.id == again.id and first.body is None and first.state == PENDING
    filled = store.set_body(first.id, "hello", True)
    assert filled.body == "hello" and filled.formatted
    assert store.set_body(first.id, "other", False).body == "hello"  # the text is written once


def test_chunks_move_through_attempting_and_keep_their_message_ids(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    d = store.record("report", 42, "x", formatted=False)
    assert store.mark_attempting(d.id, 2)
    assert not store.mark_attempting(d.id, 2)  # one attempt at a time
    assert store.get(d.id).state == ATTEMPTING
    after_one = store.chunk_sent(d.id, 100, parse_fallback=False)
    assert (after_one.state, after_one.chunks_sent, after_one.message_ids) == (PENDING, 1, (100,))
    store.mark_attempting(d.id, 2)
    done = store.chunk_sent(d.id, 101, parse_fallback=True)
    assert (done.state, done.message_ids, done.parse_fallbacks) == (DELIVERED, (100, 101), 1)


def test_a_restart_turns_an_interrupted_attempt_uncertain_and_keeps_pending_ones(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    mid_send = store.record("reply", 42, "a", formatted=True)
    never_tried = store.record("reply", 42, "b", formatted=True)
    store.mark_attempting(mid_send.id, 1)
    store.close()
    reopened = DeliveryStore(tmp_path)
    assert reopened.settle_interrupted() == 1
    assert reopened.get(mid_send.id).state == UNCERTAIN
    assert reopened.get(never_tried.id).state == PENDING
    assert not reopened.mark_attempting(mid_send.id, 1)  # never resent


def test_failed_and_not_sent_outcomes(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    d = store.record("reply", 42, "a", formatted=False)
    store.mark_attempting(d.id, 1)
    store.chunk_not_sent(d.id, "network down")
    assert store.get(d.id).state == PENDING
    store.mark_attempting(d.id, 1)
    store.fail(d.id, "403 Forbidden: bot was blocked by the user")
    assert store.get(d.id).state == FAILED
    assert store.counts()[FAILED] == 1


def test_an_update_is_marked_handled_once(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    assert not store.was_handled(7)
    store.mark_handled(7, "steer")
    store.mark_handled(7, "steer")
    assert store.was_handled(7)


def test_a_merged_message_drops_only_its_empty_obligation(tmp_path) -> None:
    store = DeliveryStore(tmp_path)
    merged = store.open_reply("turn-merged", 42, "s1")
    answering = store.open_reply("turn-answering", 42, "s1")
    store.set_body(answering.id, "one answer", True)
    store.drop_merged(merged.id)
    store.drop_merged(answering.id)  # has its text: never dropped
    assert store.for_turn("turn-merged") is None
    assert store.for_turn("turn-answering").body == "one answer"
