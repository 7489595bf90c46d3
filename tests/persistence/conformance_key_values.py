"""Conformance: the sorted key-value space and its atomic conditional operations, raced by
tasks, threads and OS processes."""

from __future__ import annotations

import asyncio

from atomic_agent.persistence.store_records import KeyValue
from tests.persistence.conformance_helpers import in_thread, needs_processes
from tests.persistence.store_harness import Child, StoreHarness


class KeyValueConformance:
    async def test_write_if_absent_has_exactly_one_winner_among_tasks(self, harness: StoreHarness):
        stores = [harness.open(), harness.open()]

        async def attempt(i: int) -> bool:
            async with stores[i % 2].transaction() as tx:
                return await tx.write_if_absent("only", i)

        wins = await asyncio.gather(*(attempt(i) for i in range(40)))
        assert wins.count(True) == 1
        assert await stores[0].get("only") == wins.index(True)

    async def test_write_if_absent_has_exactly_one_winner_among_threads(self, harness: StoreHarness):
        store = harness.open()

        async def attempt(i: int) -> bool:
            async with store.transaction() as tx:
                return await tx.write_if_absent("only", i)

        runs = [in_thread(attempt, i) for i in range(8)]
        for thread, _ in runs:
            thread.join()
        wins = [result[0] for _, result in runs]
        assert wins.count(True) == 1

    async def test_write_if_absent_has_exactly_one_winner_across_processes(self, harness: StoreHarness):
        needs_processes(harness)
        harness.open()  # creates and migrates the file before the children race
        children = [Child(harness, "write_if_absent", "only", f"child-{i}") for i in range(3)]
        for child in children:
            assert await child.aline() == "ready"
        for child in children:
            child.send()
        wins = [await child.aline() for child in children]
        assert [child.finish() for child in children] == [0, 0, 0]
        assert wins.count(True) == 1
        assert await harness.open().get("only") == f"child-{wins.index(True)}"

    async def test_compare_and_set_increments_are_never_lost_among_tasks(self, harness: StoreHarness):
        stores = [harness.open(), harness.open()]
        async with stores[0].transaction() as tx:
            await tx.put("n", 0)
        losses = 0

        async def increment(i: int) -> None:
            nonlocal losses
            while True:
                current = await stores[i % 2].get("n")
                await asyncio.sleep(0)  # let others move the value in between
                async with stores[i % 2].transaction() as tx:
                    if await tx.compare_and_set("n", current, current + 1):
                        return
                losses += 1

        await asyncio.gather(*(increment(i) for i in range(30)))
        assert await stores[0].get("n") == 30
        assert losses > 0, "the race never happened, so the test proved nothing"

    async def test_compare_and_set_across_processes_never_loses_an_increment(self, harness: StoreHarness):
        needs_processes(harness)
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("n", 0)
        children = [Child(harness, "cas_increment", "n", "40") for _ in range(2)]
        for child in children:
            assert await child.aline() == "ready"
        for child in children:
            child.send()
        for child in children:
            await child.aline()
        assert [child.finish() for child in children] == [0, 0]
        assert await store.get("n") == 80

    async def test_compare_and_set_with_none_deletes_only_the_expected_value(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("k", {"owner": "a"})
            assert not await tx.compare_and_set("k", {"owner": "b"}, None)
            assert await tx.get("k") == {"owner": "a"}
            assert await tx.compare_and_set("k", {"owner": "a"}, None)
            assert not await tx.compare_and_set("k", {"owner": "a"}, {"owner": "c"})
        assert await store.get("k") is None

    async def test_compare_and_set_compares_canonical_json(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            await tx.put("k", {"b": 2, "a": [1, "x"]})
            assert await tx.compare_and_set("k", {"a": [1, "x"], "b": 2}, {"v": 1})
            assert not await tx.compare_and_set("k", {"v": 1.0}, {"v": 2}), "1 and 1.0 are different JSON"
            assert not await tx.compare_and_set("k", {"v": True}, {"v": 2})
        assert await store.get("k") == {"v": 1}

    async def test_claim_by_delete_has_exactly_one_winner_among_tasks(self, harness: StoreHarness):
        stores = [harness.open(), harness.open()]
        async with stores[0].transaction() as tx:
            await tx.put("job", {"payload": 42})

        async def attempt(i: int):
            async with stores[i % 2].transaction() as tx:
                return await tx.claim("job")

        got = await asyncio.gather(*(attempt(i) for i in range(30)))
        assert [g for g in got if g is not None] == [{"payload": 42}]
        assert await stores[1].get("job") is None

    async def test_claim_by_delete_has_exactly_one_winner_among_threads(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            for i in range(20):
                await tx.put(f"job.{i:02d}", i)

        async def claim_all() -> list[int]:
            won = []
            for i in range(20):
                async with store.transaction() as tx:
                    value = await tx.claim(f"job.{i:02d}")
                if value is not None:
                    won.append(value)
            return won

        runs = [in_thread(claim_all) for _ in range(4)]
        for thread, _ in runs:
            thread.join()
        claimed = [value for _, result in runs for value in result[0]]
        assert sorted(claimed) == list(range(20))

    async def test_claim_by_delete_has_exactly_one_winner_across_processes(self, harness: StoreHarness):
        needs_processes(harness)
        store = harness.open()
        keys = [f"job.{i:03d}" for i in range(200)]  # enough for the children to run in lockstep
        async with store.transaction() as tx:
            for key in keys:
                await tx.put(key, key)
        children = [Child(harness, "claim", *keys) for _ in range(2)]
        for child in children:
            assert await child.aline() == "ready"
        for child in children:
            child.send()
        won = [await child.aline() for child in children]
        assert [child.finish() for child in children] == [0, 0]
        assert sorted(won[0] + won[1]) == keys, "every key claimed exactly once"
        assert await store.scan("job.") == []

    async def test_scan_returns_keys_in_order_within_the_prefix(self, harness: StoreHarness):
        store = harness.open()
        keys = ["a", "a.", "a.1", "a.10", "a.2", "a.\u00e9", "a.\U0001f600", "a/", "ab", "b", "a.\uffff"]
        async with store.transaction() as tx:
            for key in reversed(keys):
                await tx.put(key, key)
        everything = [kv.key for kv in await store.scan("")]
        assert everything == sorted(keys)
        assert [kv.key for kv in await store.scan("a.")] == sorted(k for k in keys if k.startswith("a."))
        assert [kv.key for kv in await store.scan("a.", limit=2)] == ["a.", "a.1"]
        assert [kv.key for kv in await store.scan("a.", after="a.2", limit=2)] == ["a.\u00e9", "a.\uffff"]
        assert await store.scan("zz") == []

    async def test_scan_inside_a_transaction_merges_uncommitted_writes_and_deletes(self, harness: StoreHarness):
        store = harness.open()
        async with store.transaction() as tx:
            for key in ("q.1", "q.3", "q.5"):
                await tx.put(key, key)
        async with store.transaction() as tx:
            await tx.claim("q.3")
            await tx.put("q.2", "q.2")
            await tx.put("q.5", "changed")
            assert await tx.scan("q.") == [KeyValue("q.1", "q.1"), KeyValue("q.2", "q.2"), KeyValue("q.5", "changed")]
            assert [kv.key for kv in await tx.scan("q.", limit=1, after="q.1")] == ["q.2"]
