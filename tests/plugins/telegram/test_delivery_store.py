"""Delivery records, one store on both engines (telegram.sqlite and the fleet's PostgreSQL):
written before the send, pending -> attempting -> delivered | failed | uncertain, chunk
evidence kept; what a dead process left mid-send becomes uncertain, never resent; handled
updates are once per bot; the offset only moves forward."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.telegram.delivery_store import (
    ATTEMPTING,
    DELIVERED,
    FAILED,
    PENDING,
    UNCERTAIN,
    DeliveryStore,
)
from tests.plugins.postgresql.pg_kit import backend_on

BOT, OTHER_BOT = 111, 222


@pytest.fixture(params=["sqlite", "postgresql"])
def open_store(request: Any, tmp_path: Path) -> Iterator[Callable[[], DeliveryStore]]:
    """Opens the records as a new process would (each call a store of its own)."""
    opened: list[DeliveryStore] = []
    backend = None if request.param == "sqlite" else backend_on(request.getfixturevalue("postgresql_database"))

    def new_store() -> DeliveryStore:
        opened.append(DeliveryStore.of_state_dir(tmp_path, lambda: BOT) if backend is None
                      else DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT))
        return opened[-1]
    try:
        yield new_store
    finally:
        for store in opened:
            store.close()
        if backend is not None:
            backend.close()


def test_a_reply_obligation_exists_before_its_text_and_is_one_per_turn(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    first = store.open_reply("turn-1", 42, "s1")
    again = store.open_reply("turn-1", 42, "s1")
    assert first.id == again.id and first.body is None and first.state == PENDING
    filled = store.set_body(first.id, "hello", True)
    assert filled.body == "hello" and filled.formatted
    assert store.set_body(first.id, "other", False).body == "hello"  # the text is written once


def test_chunks_move_through_attempting_and_keep_their_message_ids(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    d = store.record("report", 42, "x", formatted=False)
    assert store.mark_attempting(d.id, 2)
    assert not store.mark_attempting(d.id, 2)  # one attempt at a time
    assert store.get(d.id).state == ATTEMPTING
    after_one = store.chunk_sent(d.id, 100, parse_fallback=False)
    assert (after_one.state, after_one.chunks_sent, after_one.message_ids) == (PENDING, 1, (100,))
    store.mark_attempting(d.id, 2)
    done = store.chunk_sent(d.id, 101, parse_fallback=True)
    assert (done.state, done.message_ids, done.parse_fallbacks) == (DELIVERED, (100, 101), 1)


def test_a_restart_turns_an_interrupted_attempt_uncertain_and_keeps_pending_ones(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    mid_send = store.record("reply", 42, "a", formatted=True)
    never_tried = store.record("reply", 42, "b", formatted=True)
    store.mark_attempting(mid_send.id, 1)
    store.close()
    reopened = open_store()
    assert reopened.settle_interrupted() == 1
    assert reopened.get(mid_send.id).state == UNCERTAIN
    assert reopened.get(never_tried.id).state == PENDING
    assert not reopened.mark_attempting(mid_send.id, 1)  # never resent


def test_failed_and_not_sent_outcomes(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    d = store.record("reply", 42, "a", formatted=False)
    store.mark_attempting(d.id, 1)
    store.chunk_not_sent(d.id, "network down")
    assert store.get(d.id).state == PENDING
    store.mark_attempting(d.id, 1)
    store.fail(d.id, "403 Forbidden: bot was blocked by the user")
    assert store.get(d.id).state == FAILED
    assert store.counts()[FAILED] == 1


def test_an_update_is_marked_handled_once(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    assert not store.was_handled(BOT, 7)
    store.mark_handled(BOT, 7, "steer")
    store.mark_handled(BOT, 7, "error")
    assert store.was_handled(BOT, 7)
    assert store.database.query("SELECT outcome FROM telegram_handled_updates WHERE bot_id = ? AND update_id = ?",
                                [BOT, 7]) == [{"outcome": "steer"}]


def test_a_merged_message_drops_only_its_empty_obligation(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    merged = store.open_reply("turn-merged", 42, "s1")
    answering = store.open_reply("turn-answering", 42, "s1")
    store.set_body(answering.id, "one answer", True)
    store.drop_merged(merged.id)
    store.drop_merged(answering.id)  # has its text: never dropped
    assert store.for_turn("turn-merged") is None
    assert store.for_turn("turn-answering").body == "one answer"


def test_two_bots_whose_update_ids_collide_are_both_handled(open_store: Callable[[], DeliveryStore]) -> None:
    fleet_a, fleet_b = open_store(), open_store()  # two fleets, different bots, one database
    fleet_a.mark_handled(BOT, 500, "turn")
    assert not fleet_b.was_handled(OTHER_BOT, 500)
    fleet_b.mark_handled(OTHER_BOT, 500, "steer")
    assert fleet_a.was_handled(BOT, 500) and fleet_b.was_handled(OTHER_BOT, 500)
    fleet_a.save_offset(BOT, 501)
    assert fleet_b.saved_offset(OTHER_BOT) is None


def test_the_offset_only_moves_forward(open_store: Callable[[], DeliveryStore]) -> None:
    store = open_store()
    store.save_offset(BOT, 10)
    store.save_offset(BOT, 7)  # a slower poller's older confirmation
    assert store.saved_offset(BOT) == 10
    store.save_offset(BOT, 12)
    assert store.saved_offset(BOT) == 12


def test_a_live_senders_attempt_is_left_to_it(open_store: Callable[[], DeliveryStore]) -> None:
    sending = open_store()
    d = sending.record("reply", 42, "a", formatted=False)
    assert sending.mark_attempting(d.id, 1)
    if sending.database.engine == "sqlite":
        pytest.skip("one state dir: the store is opened at a host's start, every other sender is gone")
    other_host = open_store()
    assert other_host.settle_interrupted() == 0  # its sender's lease is held: it may be mid-send
    assert other_host.chunk_sent(d.id, 900, parse_fallback=False).state == DELIVERED
