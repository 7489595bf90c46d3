"""Writer generations on every store implementation: a stale writer never changes a final answer."""

from __future__ import annotations

import pytest

from atomic_agent.persistence.persistence_errors import StaleWriterError
from atomic_agent.persistence.writer_generation import FINAL, WriterGenerations
from tests.persistence.store_harness import StoreHarness

gens = WriterGenerations()


async def _start(store, turn="t1"):
    async with store.transaction() as tx:
        return await gens.start_writer(tx, turn)


async def test_stale_writer_generation_cannot_change_a_final_answer(harness: StoreHarness):
    store = harness.open()
    ticket = await _start(store)
    async with gens.write_as(store, ticket) as tx:
        await tx.put("turn.t1.body", "the answer")
    async with store.transaction() as tx:
        await gens.finalize(tx, ticket, "completed", response_hash="h1")
    with pytest.raises(StaleWriterError, match="stale.*final"):
        async with gens.write_as(store, ticket) as tx:
            await tx.put("turn.t1.body", "a late stream chunk")
    with pytest.raises(StaleWriterError):
        async with store.transaction() as tx:
            await gens.finalize(tx, ticket, "failed")
    assert await store.get("turn.t1.body") == "the answer"
    state = await gens.state(store, "t1")
    assert (state.state, state.outcome, state.response_hash) == (FINAL, "completed", "h1")


async def test_a_new_writer_makes_the_previous_generation_stale(harness: StoreHarness):
    store, other = harness.open(), harness.open()
    old = await _start(store)
    new = await _start(other)  # a retry on another owner takes over
    assert new.generation == old.generation + 1
    assert not await gens.is_current(store, old) and await gens.is_current(store, new)
    with pytest.raises(StaleWriterError, match="generation 1 .* is stale .*generation 2, running"):
        async with gens.write_as(store, old) as tx:
            await tx.put("progress", "old")
    async with gens.write_as(other, new) as tx:
        await tx.put("progress", "new")
    assert await store.get("progress") == "new"


async def test_a_stale_write_rolls_back_everything_in_its_transaction(harness: StoreHarness):
    store = harness.open()
    old = await _start(store)
    await _start(store)
    with pytest.raises(StaleWriterError):
        async with store.transaction() as tx:
            await tx.append("turn.t1.events", "chunk")
            await gens.require_current(tx, old)
    assert await store.read("turn.t1.events") == []


async def test_a_fenced_turn_refuses_its_zombie_writer(harness: StoreHarness):
    store = harness.open()
    zombie = await _start(store)
    async with store.transaction() as tx:  # recovery: the owner's lease expired
        assert await gens.fence(tx, "t1") == zombie.generation + 1
    with pytest.raises(StaleWriterError):
        async with gens.write_as(store, zombie):
            pass


async def test_a_finalized_turn_takes_no_new_writer(harness: StoreHarness):
    store = harness.open()
    ticket = await _start(store)
    async with store.transaction() as tx:
        await gens.finalize(tx, ticket, "stopped")
    with pytest.raises(StaleWriterError, match="already final"):
        await _start(store)


async def test_generations_are_per_turn(harness: StoreHarness):
    store = harness.open()
    a, b = await _start(store, "a"), await _start(store, "b")
    assert a.generation == b.generation == 1
    async with store.transaction() as tx:
        await gens.finalize(tx, a, "completed")
    assert await gens.is_current(store, b)
