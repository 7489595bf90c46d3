"""SqliteStore at run time: a locked database, a full disk, group commit, durability levels per
commit, abandoning like a crashed process, and per-thread reader connections."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from atomic_agent.persistence.persistence_errors import StoreClosedError, StoreFullError, StoreLockedError
from atomic_agent.persistence.sqlite_store import SqliteStore


@pytest.fixture
async def store(tmp_path: Path):
    opened = SqliteStore.open(tmp_path / "store.sqlite")
    yield opened
    await opened.close()

async def test_locked_database_gives_a_clear_error_and_loses_nothing(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    store = SqliteStore.open(path, busy_timeout_s=0.2)
    async with store.transaction() as tx:
        await tx.append("s", "committed before the lock")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    with pytest.raises(StoreLockedError, match=r"locked by another process.*nothing was written.*try again"):
        async with store.transaction() as tx:
            await tx.append("s", "refused")
    assert [r.value for r in await store.read("s")] == ["committed before the lock"]  # reads still work
    other.execute("ROLLBACK")
    other.close()
    async with store.transaction() as tx:
        assert await tx.append("s", "after the lock") == 2
    await store.close()


async def test_open_while_another_process_holds_the_lock_gives_a_clear_error(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with pytest.raises(StoreLockedError, match="locked by another process"):
        SqliteStore.open(path, busy_timeout_s=0.1)
    other.execute("ROLLBACK")
    other.close()
    await (SqliteStore.open(path)).close()


async def test_full_disk_gives_a_clear_error_and_loses_nothing_committed(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    store = SqliteStore.open(path, max_page_count=12)
    committed = []
    with pytest.raises(StoreFullError, match=r"full.*nothing of this transaction was written.*Free disk space"):
        for i in range(1000):
            async with store.transaction() as tx:
                await tx.append("s", {"i": i, "pad": "x" * 1500})
                await tx.put(f"k.{i:04d}", i)
            committed.append(i)
    assert committed, "the limit left no room for even one commit"
    await store.close()
    reopened = SqliteStore.open(path)
    assert [r.value["i"] for r in await reopened.read("s")] == committed
    assert [kv.value for kv in await reopened.scan("k.")] == committed
    async with reopened.transaction() as tx:  # with room again, writing simply continues
        assert await tx.append("s", "more") == len(committed) + 1
    await reopened.close()


async def test_full_disk_fails_every_member_of_its_group_and_keeps_earlier_commits(tmp_path: Path):
    store = SqliteStore.open(tmp_path / "store.sqlite", max_page_count=8)
    async with store.transaction() as tx:
        await tx.put("before", 1)
    release = asyncio.Event()
    outcomes: dict[str, str] = {}

    async def first():
        try:
            async with store.transaction() as tx:
                await tx.put("first", 1)
                await release.wait()
            outcomes["first"] = "committed"
        except StoreFullError as exc:
            outcomes["first"] = str(exc)

    async def huge():
        try:
            async with store.transaction() as tx:
                await tx.put("huge", "x" * 200_000)
            outcomes["huge"] = "committed"
        except StoreFullError:
            outcomes["huge"] = "full"

    async def after():
        async with store.transaction() as tx:
            await tx.put("after", 1)
        outcomes["after"] = "committed"

    tasks = [asyncio.create_task(first())]
    while store._writer._active is None:  # the first unit holds the writer
        await asyncio.sleep(0)
    tasks += [asyncio.create_task(huge()), asyncio.create_task(after())]
    while len(store._writer._pending) < 2:  # both queued behind it, so they join its group
        await asyncio.sleep(0)
    release.set()
    await asyncio.gather(*tasks)
    assert outcomes["huge"] == "full"
    assert "rolled back with it" in outcomes["first"], outcomes
    assert outcomes["after"] == "committed"
    assert (await store.get("before"), await store.get("first"), await store.get("after")) == (1, None, 1)
    await store.close()


async def test_group_commit_batches_waiting_transactions_into_one_commit(store: SqliteStore):
    release = asyncio.Event()

    async def holder():
        async with store.transaction() as tx:
            await tx.put("holder", 1)
            await release.wait()

    async def one(i: int):
        async with store.transaction() as tx:
            await tx.append("s", i)

    first = asyncio.create_task(holder())
    while store._writer._active is None:
        await asyncio.sleep(0)
    others = [asyncio.create_task(one(i)) for i in range(20)]
    while len(store._writer._pending) < 20:
        await asyncio.sleep(0)
    commits = store.writer_stats.commits
    release.set()
    await asyncio.gather(first, *others)
    assert store.writer_stats.commits - commits == 1
    assert store.writer_stats.largest_group == 21
    outside = sqlite3.connect(store.path)  # resolved only after COMMIT: another connection sees all
    assert outside.execute("SELECT count(*) FROM store_records").fetchone()[0] == 20
    outside.close()


async def test_a_unit_that_raises_is_rolled_back_alone_within_its_group(store: SqliteStore):
    release = asyncio.Event()

    async def holder():
        async with store.transaction() as tx:
            await tx.put("a", 1)
            await release.wait()

    async def failing():
        async with store.transaction() as tx:
            await tx.put("b", 1)
            raise ValueError("this unit only")

    async def fine():
        async with store.transaction() as tx:
            await tx.put("c", 1)

    tasks = [asyncio.create_task(holder())]
    while store._writer._active is None:
        await asyncio.sleep(0)
    tasks += [asyncio.create_task(failing()), asyncio.create_task(fine())]
    while len(store._writer._pending) < 2:
        await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert isinstance(results[1], ValueError) and results[0] is None and results[2] is None
    assert [kv.key for kv in await store.scan("")] == ["a", "c"]
    assert store.writer_stats.largest_group == 2


async def test_durable_commits_use_synchronous_full_and_partials_normal(store: SqliteStore):
    stats = store.writer_stats
    for durable in (False, False, True, False, True):
        async with store.transaction(durable=durable) as tx:
            await tx.append("s", durable)
    assert (stats.full_commits, stats.normal_commits) == (2, 3)
    assert stats.level_switches == 3  # NORMAL -> FULL -> NORMAL -> FULL, each between transactions


async def test_a_durable_unit_never_joins_a_normal_group(store: SqliteStore):
    release = asyncio.Event()

    async def partial_holder():
        async with store.transaction(durable=False) as tx:
            await tx.put("partial", 1)
            await release.wait()

    async def acknowledged():
        async with store.transaction(durable=True) as tx:
            await tx.put("ack", 1)

    first = asyncio.create_task(partial_holder())
    while store._writer._active is None:
        await asyncio.sleep(0)
    second = asyncio.create_task(acknowledged())
    while not store._writer._pending:
        await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, second)
    assert (store.writer_stats.normal_commits, store.writer_stats.full_commits) == (1, 1)


async def test_abandon_rolls_back_the_open_transaction_and_keeps_committed_work(tmp_path: Path):
    path = tmp_path / "store.sqlite"
    store = SqliteStore.open(path)
    async with store.transaction() as tx:
        await tx.append("s", "kept")
    inside = asyncio.Event()

    async def interrupted():
        async with store.transaction() as tx:
            await tx.append("s", "lost")
            inside.set()
            await asyncio.Event().wait()

    task = asyncio.create_task(interrupted())
    await inside.wait()
    store.abandon()
    with pytest.raises(StoreClosedError):
        async with store.transaction():
            pass
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    reopened = SqliteStore.open(path)
    assert [r.value for r in await reopened.read("s")] == ["kept"]
    await reopened.close()


async def test_reads_from_several_threads_use_their_own_connections(store: SqliteStore):
    async with store.transaction() as tx:
        await tx.put("k", "v")
    barrier = threading.Barrier(3)
    got: list[str] = []

    def reader() -> None:
        got.append(asyncio.run(store.get("k")))
        barrier.wait()  # all three threads alive at once: three distinct threads

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert got == ["v", "v", "v"]
    assert len({id(conn) for conn in store._readers}) == 3
