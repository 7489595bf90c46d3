"""A change started in a worker thread is awaited to its end, even by a cancelled task."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end


async def test_a_cancelled_task_still_answers_with_the_changes_result(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()
    target = tmp_path / "f.txt"

    def change(text: str) -> int:
        started.set()
        release.wait(30)
        return target.write_text(text)

    task = asyncio.ensure_future(write_to_the_end(change, "landed"))
    await asyncio.to_thread(started.wait, 30)
    task.cancel()
    await asyncio.sleep(0.05)
    assert not task.done()  # still waiting for the change: it cannot be stopped
    release.set()
    assert await asyncio.wait_for(task, 30) == len("landed") and target.read_text() == "landed"


async def test_a_change_that_fails_after_the_cancel_answers_with_its_error(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    def change() -> None:
        started.set()
        release.wait(30)
        raise OSError("disk full")

    task = asyncio.ensure_future(write_to_the_end(change))
    await asyncio.to_thread(started.wait, 30)
    task.cancel()
    release.set()
    try:
        await asyncio.wait_for(task, 30)
    except OSError as exc:
        assert "disk full" in str(exc)
    else:
        raise AssertionError("the change's error is the answer")
