"""Group commit: concurrent callers share one fsync, and none is released before an fsync that
started after its own commit has finished."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.storage.group_commit import GroupSync, deferred_sync, sync_is_deferred


class HeldSync:
    """An fsync that records how many commits existed when it began, and waits to be released."""

    def __init__(self, group: list[GroupSync]) -> None:
        self.group = group
        self.began: list[int] = []
        self.release = threading.Event()
        self.fail: OSError | None = None

    def __call__(self) -> None:
        self.began.append(self.group[0].committed)
        self.release.wait(10)
        if self.fail is not None:
            raise self.fail


def held_group() -> tuple[GroupSync, HeldSync]:
    holder: list[GroupSync] = []
    sync = HeldSync(holder)
    holder.append(GroupSync(sync))
    return holder[0], sync


async def until(condition) -> None:  # type: ignore[no-untyped-def]
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition never held")


async def test_callers_that_commit_during_one_fsync_share_the_next():
    group, sync = held_group()
    group.relaxed_commit()
    first = asyncio.ensure_future(group.wait())
    await until(lambda: len(sync.began) == 1)  # fsync 1 runs, covering commit 1 only
    for _ in range(10):
        group.relaxed_commit()
    later = [asyncio.ensure_future(group.wait()) for _ in range(10)]
    await asyncio.sleep(0.05)
    assert not first.done() and not any(w.done() for w in later)
    sync.release.set()
    await asyncio.gather(first, *later)
    assert group.fsyncs == 2 and sync.began == [1, 11]  # eleven callers, two fsyncs


async def test_no_caller_is_released_by_an_fsync_that_began_before_its_commit():
    group, sync = held_group()
    group.relaxed_commit()
    first = asyncio.ensure_future(group.wait())
    await until(lambda: len(sync.began) == 1)
    group.relaxed_commit()  # committed while fsync 1 is already running
    second = asyncio.ensure_future(group.wait())
    sync.release.set()
    await first
    assert group.synced == 1
    await second  # needed a second fsync of its own
    assert sync.began == [1, 2] and group.synced == 2


async def test_a_failed_fsync_reaches_every_waiter_and_proves_nothing_durable():
    group, sync = held_group()
    group.relaxed_commit()
    sync.fail = OSError(5, "EIO")
    waiters = [asyncio.ensure_future(group.wait()) for _ in range(3)]
    sync.release.set()
    results = await asyncio.gather(*waiters, return_exceptions=True)
    assert all(isinstance(r, OSError) for r in results)
    assert group.synced == 0 and group.pending


async def test_nothing_owed_costs_no_fsync():
    group, sync = held_group()
    await group.wait()
    group.relaxed_commit()
    group.durable_commit()  # a FULL commit on the same connection made it durable
    await group.wait()
    assert sync.began == [] and group.fsyncs == 0


def test_only_writes_inside_deferred_sync_are_relaxed(tmp_path: Path):
    store = SessionStore(tmp_path)
    try:
        def level() -> int:
            return store.conn.execute("PRAGMA synchronous").fetchone()[0]

        with store.write():
            assert level() == 2  # FULL
        assert not store.group.pending
        with deferred_sync():
            assert sync_is_deferred()
            session = store.create(tmp_path)
            with store.write():
                assert level() == 1  # NORMAL: committed, not yet fsynced
        assert not sync_is_deferred() and level() == 2
        assert store.group.committed == 2 and store.group.pending
        store.sync_now()
        assert not store.group.pending and store.group.fsyncs == 1
        assert SessionStore(tmp_path).exists(session.id)
    finally:
        store.close()


async def test_the_real_fsync_covers_a_relaxed_commit(tmp_path: Path):
    store = SessionStore(tmp_path)
    try:
        with deferred_sync():
            store.create(tmp_path)
        await store.wait_durable()
        assert store.group.fsyncs == 1 and not store.group.pending
    finally:
        store.close()


async def test_a_durable_commit_never_lets_a_later_caller_hear_before_an_earlier_one():
    group, sync = held_group()
    order: list[str] = []

    async def waiter(name: str) -> None:
        await group.wait()
        order.append(name)

    group.relaxed_commit()
    earlier = asyncio.ensure_future(waiter("earlier"))
    await until(lambda: len(sync.began) == 1)
    group.relaxed_commit()
    group.durable_commit()  # a FULL commit covers both while the earlier one's fsync still runs
    later = asyncio.ensure_future(waiter("later"))  # asks after the FULL commit: durable already
    await asyncio.sleep(0.01)
    assert order == ["earlier", "later"]  # the earlier caller hears first
    sync.release.set()
    await asyncio.gather(earlier, later)
    assert order == ["earlier", "later"]


async def test_without_offload_a_wait_fsyncs_at_once_without_yielding_to_the_loop():
    group, sync = held_group()
    sync.release.set()
    group.offload = False  # (the chaos suites' mode: a wait takes the loop turns a FULL commit took)
    group.relaxed_commit()
    ran: list[str] = []
    other = asyncio.get_running_loop().call_soon(ran.append, "other")
    await group.wait()
    assert ran == [] and sync.began == [1] and not group.pending  # nothing else ran meanwhile
    other.cancel()
