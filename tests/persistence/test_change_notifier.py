"""The in-process notifier and the manual clock."""

from __future__ import annotations

import asyncio
import threading

import pytest

from atomic_agent.persistence.change_notifier import LocalNotifier
from atomic_agent.persistence.store_clock import ManualClock
from atomic_agent.persistence.store_records import ChangeSet


async def test_a_change_published_before_the_wait_is_not_lost():
    notifier = LocalNotifier()
    with notifier.watch(key_prefixes=["queue.s1."]) as watch:
        notifier.publish(ChangeSet(keys=frozenset({"queue.s1.steering.1"})))
        assert await watch.wait(timeout=10)
        assert not await watch.wait(timeout=0)  # consumed: nothing new since


async def test_a_watch_ignores_unrelated_changes_and_closed_watches_get_nothing():
    notifier = LocalNotifier()
    watch = notifier.watch(streams=["conversation.s1"])
    notifier.publish(ChangeSet(streams=frozenset({"conversation.s2"}), keys=frozenset({"x"})))
    assert not await watch.wait(timeout=0)
    watch.close()
    notifier.publish(ChangeSet(streams=frozenset({"conversation.s1"})))
    assert not await watch.wait(timeout=0)


async def test_a_publish_from_another_thread_wakes_the_waiting_loop():
    notifier = LocalNotifier()
    watch = notifier.watch(streams=["s"])
    thread = threading.Thread(target=notifier.publish, args=(ChangeSet(streams=frozenset({"s"})),))
    thread.start()
    assert await watch.wait(timeout=10)
    thread.join()


async def test_a_watch_on_nothing_is_refused():
    with pytest.raises(ValueError, match="at least one"):
        LocalNotifier().watch()


async def test_manual_clock_sleepers_wake_only_when_time_passes_their_deadline():
    clock = ManualClock(100.0)
    sleeper = asyncio.create_task(clock.sleep(10))
    await asyncio.sleep(0)
    clock.advance(9)
    await asyncio.sleep(0)
    assert not sleeper.done()
    clock.advance(1)
    await sleeper
    assert clock.now() == 110.0
    with pytest.raises(ValueError, match="never goes back"):
        clock.set(50)
