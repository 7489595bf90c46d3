"""Conformance: two owners on one store, durability across SIGKILL, change notifications."""

from __future__ import annotations

import pytest

from tests.persistence.conformance_helpers import needs_processes, seqs
from tests.persistence.store_harness import Child, StoreHarness


class OwnerConformance:
    async def test_two_owners_on_one_store_see_each_others_commits(self, harness: StoreHarness):
        first, second = harness.open(), harness.open()
        async with first.transaction() as tx:
            await tx.append("s", "from first")
        async with second.transaction() as tx:
            assert await tx.append("s", "from second") == 2
            assert await tx.claim("missing") is None
        assert [r.value for r in await first.read("s")] == ["from first", "from second"]

    async def test_acknowledged_commit_survives_sigkill(self, harness: StoreHarness):
        needs_processes(harness)
        harness.open()
        child = Child(harness, "commit_and_ack", "s", "25")
        acked = []
        while (line := await child.aline()) != "idle":
            acked.append(line["acked"])
        child.kill9()
        reopened = harness.open()
        assert await seqs(reopened, "s") == acked == list(range(1, 26))

    async def test_uncommitted_transaction_of_a_killed_process_leaves_nothing(self, harness: StoreHarness):
        needs_processes(harness)
        harness.open()
        child = Child(harness, "die_inside_transaction", "s")
        assert await child.aline() == "inside"
        child.kill9()
        reopened = harness.open()
        assert await reopened.read("s") == [] and await reopened.get("half.written") is None
        async with reopened.transaction() as tx:  # the dead process's lock died with it
            assert await tx.append("s", "alive") == 1

    async def test_notifier_wakes_a_watch_on_commit_and_not_on_rollback(self, harness: StoreHarness):
        store = harness.open()
        watch = store.notifier.watch(streams=["s"], key_prefixes=["queue."])
        try:
            with pytest.raises(RuntimeError):
                async with store.transaction() as tx:
                    await tx.append("s", 1)
                    raise RuntimeError()
            assert not await watch.wait(timeout=0.01)
            async with store.transaction() as tx:
                await tx.put("elsewhere", 1)
            assert not await watch.wait(timeout=0.01)
            async with store.transaction() as tx:  # the change lands before anyone waits: not lost
                await tx.put("queue.a", 1)
            assert await watch.wait(timeout=10)
            async with store.transaction() as tx:
                await tx.append("s", 2)
            assert await watch.wait(timeout=10)
        finally:
            watch.close()
