"""The two durable queues of a session, on every store implementation: the four delivery
strategies, consumption as one transaction, and seed 003's queue-key collision bugs."""

from __future__ import annotations

import asyncio

import pytest

from atomic_agent.persistence.persistence_errors import QueueFullError
from atomic_agent.persistence.session_queues import (
    DeliveryMode,
    QueueName,
    SessionQueues,
    conversation_stream,
    writer_of_key,
)
from atomic_agent.persistence.store_clock import ManualClock
from tests.persistence.conformance import SimulatedCrash, needs_processes
from tests.persistence.store_harness import Child, StoreHarness

ALL = DeliveryMode.ALL
ONE = DeliveryMode.ONE_AT_A_TIME


async def _texts(store, session: str = "s1") -> list[str]:
    return [r.value["text"] for r in await store.read(conversation_stream(session))]


async def _fill(store, queues: SessionQueues, queue: QueueName, texts: list[str], session: str = "s1") -> None:
    for text in texts:
        await queues.submit(store, session, queue, text)


async def _consume(store, queues, queue, mode, session="s1"):
    async with store.transaction() as tx:
        return await queues.consume(tx, session, queue, mode)


async def test_steering_one_at_a_time_consumes_the_oldest_message_first(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    await _fill(store, queues, QueueName.STEERING, ["first", "second", "third"])
    got = [(await _consume(store, queues, "steering", ONE)).messages[0].text for _ in range(3)]
    assert got == ["first", "second", "third"]
    assert not await _consume(store, queues, "steering", ONE)
    assert await _texts(store) == ["first", "second", "third"]


async def test_steering_all_consumes_every_pending_message_in_order(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    await _fill(store, queues, QueueName.STEERING, ["a", "b", "c"])
    delivery = await _consume(store, queues, QueueName.STEERING, ALL)
    assert [m.text for m in delivery.messages] == ["a", "b", "c"] and delivery.seqs == (1, 2, 3)
    assert await queues.pending(store, "s1", "steering") == []


async def test_send_waits_until_the_agent_would_otherwise_stop(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    await _fill(store, queues, QueueName.SEND, ["follow-up 1", "follow-up 2"])
    async with store.transaction() as tx:
        assert not await queues.consume_next(tx, "s1", would_stop=False)
    async with store.transaction() as tx:
        delivery = await queues.consume_next(tx, "s1", would_stop=True)
    assert delivery.queue == "send" and [m.text for m in delivery.messages] == ["follow-up 1"]
    async with store.transaction() as tx:
        delivery = await queues.consume_next(tx, "s1", would_stop=True, send_mode=ALL)
    assert [m.text for m in delivery.messages] == ["follow-up 2"]


async def test_steering_takes_precedence_over_send(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    await _fill(store, queues, QueueName.SEND, ["sent earlier"])
    await _fill(store, queues, QueueName.STEERING, ["steer 1", "steer 2"])
    order = []
    while True:
        async with store.transaction() as tx:
            delivery = await queues.consume_next(tx, "s1", would_stop=True, steering_mode=ALL)
        if not delivery:
            break
        order.append((delivery.queue, [m.text for m in delivery.messages]))
    assert order == [("steering", ["steer 1", "steer 2"]), ("send", ["sent earlier"])]


async def test_consumption_moves_messages_in_one_transaction_or_not_at_all(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    await _fill(store, queues, QueueName.STEERING, ["m1", "m2"])
    with pytest.raises(SimulatedCrash):
        async with store.transaction() as tx:
            delivery = await queues.consume(tx, "s1", "steering", ALL)
            assert len(delivery.messages) == 2
            raise SimulatedCrash()  # dies before the commit
    assert await _texts(store) == []
    assert [m.text for m in await queues.pending(store, "s1", "steering")] == ["m1", "m2"]
    await _consume(store, queues, "steering", ALL)
    assert await _texts(store) == ["m1", "m2"] and await queues.pending(store, "s1", "steering") == []


async def test_queue_keys_continue_after_a_restart_instead_of_colliding(harness: StoreHarness):
    clock = ManualClock()  # the same instant in both "processes", as in the seed's bug
    first = harness.open()
    before = await SessionQueues("same-writer", clock=clock).submit(first, "s1", "send", "before restart")
    await first.close()
    second = harness.open()
    after = await SessionQueues("same-writer", clock=clock).submit(second, "s1", "send", "after restart")
    assert after.order == before.order + 1
    assert [m.text for m in await SessionQueues("x").pending(second, "s1", "send")] == ["before restart",
                                                                                        "after restart"]


async def test_two_writers_accepting_at_once_never_overwrite_each_other(harness: StoreHarness):
    clock = ManualClock()
    owners = [(harness.open(), SessionQueues(f"owner-{i}", clock=clock)) for i in range(2)]

    async def accept(i: int):
        store, queues = owners[i % 2]
        return await queues.submit(store, "s1", "send", f"msg-{i}")

    accepted = await asyncio.gather(*(accept(i) for i in range(40)))
    entries = await owners[0][0].scan(owners[0][1].queue_prefix("s1", "send"))
    assert len(entries) == 40 and {e.value["message_id"] for e in entries} == {m.message_id for m in accepted}
    assert {writer_of_key(e.key) for e in entries} == {"owner-0", "owner-1"}
    orders = [e.value["order"] for e in entries]
    assert orders == sorted(orders) and len(set(orders)) == 40


async def test_two_processes_accepting_at_once_lose_no_message(harness: StoreHarness):
    needs_processes(harness)
    store = harness.open()
    children = [Child(harness, "accept", "s1", "30", f"proc-{i}") for i in range(2)]
    for child in children:
        assert await child.aline() == "ready"
    for child in children:
        child.send()
    acked = [await child.aline() for child in children]
    assert [child.finish() for child in children] == [0, 0]
    pending = await SessionQueues("reader").pending(store, "s1", "send")
    assert sorted(m.message_id for m in pending) == sorted(acked[0] + acked[1])
    for writer in ("proc-0", "proc-1"):  # each writer's own messages keep their order
        mine = [m.text for m in pending if m.writer == writer]
        assert mine == [f"{writer}-{i}" for i in range(30)]


async def test_one_accepted_message_is_consumed_once_by_two_live_owners(harness: StoreHarness):
    a, b = harness.open(), harness.open()
    qa, qb = SessionQueues("a"), SessionQueues("b")
    for i in range(10):
        await qa.submit(a, "s1", "steering", f"m{i}")

    async def drain(store, queues):
        taken = []
        while True:
            async with store.transaction() as tx:
                delivery = await queues.consume(tx, "s1", "steering", ONE)
            if not delivery:
                return taken
            taken += [m.text for m in delivery.messages]
            await asyncio.sleep(0)

    got_a, got_b = await asyncio.gather(drain(a, qa), drain(b, qb))
    assert sorted(got_a + got_b) == [f"m{i}" for i in range(10)]
    texts = await _texts(a)
    assert sorted(texts) == sorted(set(texts)) and len(texts) == 10, "no message appended twice"


async def test_a_full_queue_refuses_clearly_and_keeps_what_it_holds(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    for i in range(16):
        await queues.submit(store, "s1", "steering", f"m{i}", max_pending=16)
    with pytest.raises(QueueFullError, match="already holds 16 messages.*nothing was queued"):
        await queues.submit(store, "s1", "steering", "one too many", max_pending=16)
    assert len(await queues.pending(store, "s1", "steering")) == 16
    await queues.submit(store, "s1", "send", "the send queue is separate", max_pending=16)


async def test_session_ids_with_dots_never_share_a_queue(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w.1")
    await queues.submit(store, "a", "send", "for a")
    await queues.submit(store, "a.send", "send", "for a.send")
    await queues.submit(store, "a.send.000000000001", "send", "for the lookalike")
    assert [m.text for m in await queues.pending(store, "a", "send")] == ["for a"]
    assert [m.text for m in await queues.pending(store, "a.send", "send")] == ["for a.send"]
    entries = await store.scan(queues.queue_prefix("a", "send"))
    assert [writer_of_key(e.key) for e in entries] == ["w.1"]


async def test_a_message_carries_its_origin_and_settings_into_the_conversation(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1", clock=ManualClock(100.0))
    await queues.submit(store, "s1", QueueName.SEND, "hi", origin="telegram", settings={"model": "small"})
    await _consume(store, queues, "send", ONE)
    [record] = await store.read(conversation_stream("s1"))
    assert record.value["origin"] == "telegram" and record.value["settings"] == {"model": "small"}
    assert record.value["kind"] == "user" and record.value["accepted_at"] == 100.0


async def test_unknown_queue_names_are_refused(harness: StoreHarness):
    store, queues = harness.open(), SessionQueues("w1")
    with pytest.raises(ValueError, match="unknown queue 'urgent'"):
        await queues.submit(store, "s1", "urgent", "x")
