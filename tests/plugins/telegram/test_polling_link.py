"""The polling link on a fleet's database when its start is cancelled while the poller lease
is being taken (a stop cancels the watch that retries it): the lease the worker thread
takes after all is released, not held by a host that does not poll."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from atomic_agent.plugins.telegram.fleet_poller_lease import FleetPollerLease
from atomic_agent.plugins.telegram.polling_link import PollingLink


class SlowLease(FleetPollerLease):
    """The fleet lease whose acquire blocks (a slow database) until the test lets it through."""

    def __init__(self) -> None:
        self.retry_s = 3600.0  # the watch loop never retries during the test
        self.asking, self.through, self.returned = threading.Event(), threading.Event(), threading.Event()
        self.taken = False

    def acquire(self) -> None:
        self.asking.set()
        self.through.wait(30)  # a hung-test limit
        self.taken = True
        self.returned.set()

    def release(self) -> None:
        self.taken = False


async def _no_wait(*_: Any) -> None:
    return None


async def test_a_start_cancelled_while_the_lease_is_taken_leaves_the_lease_released(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("TELEGRAM_BOT_TOKEN=123456:secret\n")
    lease = SlowLease()
    link = PollingLink(tmp_path, None, None, None, None, on_update=_no_wait, spawn=lambda work: None,  # type: ignore[arg-type]
                       on_cycle=_no_wait, send_owed=lambda: None, settle_sends=_no_wait,
                       store_of=lambda: None, lock=lease)  # type: ignore[arg-type,return-value]
    starting = asyncio.ensure_future(link.start())
    try:
        assert await asyncio.to_thread(lease.asking.wait, 30)
        starting.cancel()  # the task's own cancel, while the worker thread is in acquire
        await asyncio.sleep(0.05)
        lease.through.set()  # the database answers: the thread takes the lease after all
        await asyncio.gather(starting, return_exceptions=True)
        assert starting.cancelled()
        assert await asyncio.to_thread(lease.returned.wait, 30)
        await asyncio.sleep(0.05)  # anything still due to happen on the loop happens now
        assert not lease.taken
    finally:
        lease.through.set()
        watch = link._watch_task
        if watch is not None:
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
