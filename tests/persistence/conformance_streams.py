"""Conformance: append-only streams with per-stream monotonic seqs."""

from __future__ import annotations

import asyncio

import pytest

from atomic_agent.persistence.store_protocol import Store
from tests.persistence.conformance_helpers import SimulatedCrash, seqs
from tests.persistence.store_harness import StoreHarness


class StreamConformance:
    async def test_records_have_no_rewrite_api(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            public = {name for name in dir(tx) if not name.startswith("_")}
        writes = {"append", "drop_through", "put", "write_if_absent", "compare_and_set", "claim"}
        assert writes <= public
        reads = {"read", "last_seq", "get", "scan", "serializer", "finished"}
        assert public - reads == writes, "a new public method on a transaction must not rewrite records"
        for name in ("update", "replace", "rewrite", "set_record", "update_record", "delete_record"):
            assert not hasattr(tx, name)

    async def test_seq_is_monotonic_per_stream_and_starts_at_one(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            got = [await tx.append("a", 1), await tx.append("b", 1), await tx.append("a", 2)]
        async with store.transaction() as tx:
            got += [await tx.append("b", 2), await tx.append("a", 3)]
        assert got == [1, 1, 2, 2, 3]
        assert await seqs(store, "a") == [1, 2, 3] and await seqs(store, "b") == [1, 2]
        assert await store.last_seq("never") == 0

    async def test_seq_is_never_reused_after_drop_through(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            for i in range(5):
                await tx.append("s", i)
        async with store.transaction() as tx:
            assert await tx.drop_through("s", 5) == 5
            assert await tx.read("s") == [] and await tx.last_seq("s") == 5
            assert await tx.append("s", "after") == 6
        assert await seqs(store, "s") == [6] and await store.last_seq("s") == 6

    async def test_a_rolled_back_drop_through_leaves_the_stream_whole(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            for i in range(3):
                await tx.append("s", i)
        with pytest.raises(SimulatedCrash):
            async with store.transaction() as tx:
                await tx.drop_through("s", 2)
                await tx.append("s", "summary")
                raise SimulatedCrash()
        assert await seqs(store, "s") == [1, 2, 3]

    async def test_seq_continues_after_reopen(self, harness: StoreHarness):
        first = harness.open()
        async with first.transaction() as tx:
            await tx.append("s", 1)
        await first.close()
        second = harness.open()
        async with second.transaction() as tx:
            assert await tx.append("s", 2) == 2

    async def test_concurrent_appends_get_distinct_consecutive_seqs(self, harness: StoreHarness):
        store, other = harness.open(), harness.open()

        async def one(target: Store, i: int) -> int:
            async with target.transaction(durable=i % 3 == 0) as tx:
                return await tx.append("s", i)

        given = await asyncio.gather(*(one(store if i % 2 else other, i) for i in range(60)))
        assert sorted(given) == list(range(1, 61))
        assert await seqs(store, "s") == list(range(1, 61))

    async def test_read_after_seq_and_limit(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            for i in range(10):
                await tx.append("s", {"i": i})
        page = await store.read("s", after_seq=3, limit=4)
        assert [r.seq for r in page] == [4, 5, 6, 7] and page[0].value == {"i": 3}
        assert await store.read("s", after_seq=10) == []
        assert all(r.stream == "s" and r.written_at > 0 for r in page)
