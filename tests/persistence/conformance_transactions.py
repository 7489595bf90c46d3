"""Conformance: transactions are atomic, isolated, and refuse misuse."""

from __future__ import annotations

import asyncio

import pytest

from atomic_agent.persistence.persistence_errors import StoreClosedError, TransactionMisuseError
from atomic_agent.persistence.store_protocol import Store, Transaction
from atomic_agent.persistence.store_records import KeyValue
from tests.persistence.conformance_helpers import SimulatedCrash
from tests.persistence.store_harness import StoreHarness


class TransactionConformance:
    async def test_the_store_and_its_transactions_satisfy_the_protocol(self, harness: StoreHarness):
        store = harness.open()
        assert isinstance(store, Store)
        async with store.transaction() as tx:
            assert isinstance(tx, Transaction)


    async def test_transaction_commits_everything_or_nothing_when_the_body_raises(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.append("s", "kept")
            await tx.put("k", 1)
        with pytest.raises(RuntimeError):
            async with store.transaction() as tx:
                await tx.append("s", "lost")
                await tx.put("k", 2)
                await tx.put("other", 3)
                await tx.claim("k")
                raise RuntimeError("failure half-way")
        assert [r.value for r in await store.read("s")] == ["kept"]
        assert await store.get("k") == 1 and await store.get("other") is None
        assert await store.last_seq("s") == 1

    async def test_simulated_crash_inside_a_transaction_leaves_nothing(self, harness: StoreHarness):
        store = harness.open()
        with pytest.raises(SimulatedCrash):
            async with store.transaction() as tx:
                await tx.append("s", 1)
                await tx.write_if_absent("w", 1)
                raise SimulatedCrash()
        again = harness.open()
        assert await again.read("s") == [] and await again.get("w") is None
        async with again.transaction() as tx:  # the store is still usable, seq starts afresh
            assert await tx.append("s", 2) == 1

    async def test_cancelled_transaction_leaves_nothing(self, harness: StoreHarness):
        store = harness.open()
        entered = asyncio.Event()

        async def body():
            async with store.transaction() as tx:
                await tx.put("c", 1)
                entered.set()
                await asyncio.Event().wait()

        task = asyncio.create_task(body())
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await store.get("c") is None
        async with store.transaction() as tx:
            await tx.put("c", 2)
        assert await store.get("c") == 2

    async def test_reads_outside_a_transaction_see_only_committed_state(self, harness: StoreHarness):
        store, other = harness.open(), harness.open()
        async with store.transaction() as tx:
            await tx.append("s", "a")
            await tx.put("k", "new")
            assert await store.read("s") == [] and await store.get("k") is None
            assert await other.get("k") is None and await other.scan("") == []
        assert await other.get("k") == "new" and len(await other.read("s")) == 1

    async def test_a_transaction_reads_its_own_writes(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("b", 1)
        async with store.transaction() as tx:
            await tx.put("a", 0)
            await tx.claim("b")
            await tx.put("c", 2)
            assert await tx.append("s", "x") == 1 and await tx.last_seq("s") == 1
            assert [r.value for r in await tx.read("s")] == ["x"]
            assert await tx.scan("") == [KeyValue("a", 0), KeyValue("c", 2)]
            assert await tx.get("b") is None and await tx.get("c") == 2

    async def test_nested_transaction_in_the_same_task_is_refused(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("outer", 1)
            with pytest.raises(TransactionMisuseError, match="already open"):
                async with store.transaction():
                    pass
        assert await store.get("outer") == 1

    async def test_a_task_spawned_inside_a_transaction_waits_its_turn(self, harness: StoreHarness):
        store = harness.open()

        async def later():
            async with store.transaction() as tx:
                await tx.put("later", await tx.get("first"))

        async with store.transaction() as tx:
            await tx.put("first", "yes")
            task = asyncio.create_task(later())
            await asyncio.sleep(0)
        await task
        assert await store.get("later") == "yes"

    async def test_operations_on_a_finished_transaction_are_refused(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("k", 1)
        with pytest.raises(TransactionMisuseError, match="already ended"):
            await tx.put("k", 2)
        assert await store.get("k") == 1

    async def test_closed_store_refuses_work(self, harness: StoreHarness):
        store = harness.open()
        await store.close()
        with pytest.raises(StoreClosedError):
            async with store.transaction():
                pass
        with pytest.raises(StoreClosedError):
            await store.get("k")

    async def test_bad_input_is_refused_clearly_without_spoiling_the_transaction(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            with pytest.raises(ValueError, match="None means 'absent'"):
                await tx.put("k", None)
            with pytest.raises(ValueError, match="not JSON"):
                await tx.put("k", {"when": object()})
            with pytest.raises(ValueError, match="NaN"):
                await tx.append("s", float("nan"))
            with pytest.raises(ValueError, match="must not be empty"):
                await tx.put("", 1)
            with pytest.raises(ValueError, match="limit must be"):
                await tx.scan("", limit=0)
            await tx.put("k", "fine")
        assert await store.get("k") == "fine"
