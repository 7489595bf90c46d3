"""TurnController invariants: per-session FIFO, cross-session parallel, no priorities,
per-session hooks, cancelled submissions never run."""

from __future__ import annotations

import asyncio

import pytest

from atomic_agent.turns.turn_controller import SubmissionCancelledError, TurnController


async def test_per_session_fifo_runs_strictly_in_submission_order():
    tc = TurnController()
    order: list[str] = []

    def job(name: str, delay: float):
        async def run():
            order.append(f"start {name}")
            await asyncio.sleep(delay)
            order.append(f"end {name}")
            return name
        return run

    results = await asyncio.gather(tc.submit("s", job("a", 0.05)), tc.submit("s", job("b", 0)),
                                   tc.submit("s", job("c", 0)))
    assert results == ["a", "b", "c"]
    assert order == ["start a", "end a", "start b", "end b", "start c", "end c"]


async def test_cross_session_turns_run_in_parallel():
    tc = TurnController()
    running: set[str] = set()
    overlap: list[int] = []

    def job(name: str):
        async def run():
            running.add(name)
            await asyncio.sleep(0.05)
            overlap.append(len(running))
            running.discard(name)
        return run

    await asyncio.gather(*(tc.submit(f"s{i}", job(f"s{i}")) for i in range(3)))
    assert max(overlap) == 3


async def test_no_priorities_scheduler_queues_behind_user_turn():
    tc = TurnController()
    order: list[str] = []

    async def user():
        await asyncio.sleep(0.03)
        order.append("user")

    async def scheduled():
        order.append("scheduler")

    await asyncio.gather(tc.submit("s", user, origin="cli"), tc.submit("s", scheduled, origin="scheduler"))
    assert order == ["user", "scheduler"]


async def test_event_hook_is_per_session_and_cleared_after_the_turn():
    tc = TurnController()
    seen_a: list[dict] = []
    seen_b: list[dict] = []

    async def run_a():
        tc.emit("a", {"type": "x", "sessionId": "a"})
        tc.emit("b", {"type": "leak?", "sessionId": "b"})  # b has no turn running yet
        await asyncio.sleep(0.01)

    await tc.submit("a", run_a, on_event=seen_a.append)
    await tc.submit("b", lambda: asyncio.sleep(0), on_event=seen_b.append)
    tc.emit("a", {"type": "after"})
    assert seen_a == [{"type": "x", "sessionId": "a"}] and seen_b == []


async def test_cancelled_submission_rejects_without_running():
    tc = TurnController()
    ran: list[str] = []
    cancel = asyncio.Event()
    release = asyncio.Event()

    async def long():
        await release.wait()  # still running whatever the machine's speed

    async def never():
        ran.append("ran")

    first = asyncio.ensure_future(tc.submit("s", long))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(tc.submit("s", never, cancelled=cancel))
    await asyncio.sleep(0.01)
    assert tc.queue_position("s") == 2
    cancel.set()
    with pytest.raises(SubmissionCancelledError):
        await second
    release.set()
    await first
    assert ran == [] and not tc.is_busy("s")


async def test_a_waiting_submission_whose_task_is_cancelled_does_not_take_the_session_later():
    tc = TurnController()
    ran: list[str] = []
    release = asyncio.Event()

    async def long():
        await release.wait()

    async def job(name: str):
        ran.append(name)
        return name

    first = asyncio.ensure_future(tc.submit("s", long))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(tc.submit("s", lambda: job("second"), cancelled=asyncio.Event()))
    while tc.queue_position("s") < 2:
        await asyncio.sleep(0.001)
    third = asyncio.ensure_future(tc.submit("s", lambda: job("third")))
    while tc.queue_position("s") < 3:
        await asyncio.sleep(0.001)
    second.cancel()  # the caller's task itself (a client gone), not its cancel event
    await asyncio.gather(second, return_exceptions=True)
    release.set()
    await first
    assert await asyncio.wait_for(third, 30) == "third"  # a hung-test limit
    assert ran == ["third"] and not tc.is_busy("s")


async def test_is_busy_and_busy_session_ids():
    tc = TurnController()
    gate = asyncio.Event()

    async def hold():
        await gate.wait()

    task = asyncio.ensure_future(tc.submit("s1", hold))
    await asyncio.sleep(0)
    assert tc.is_busy("s1") and tc.busy_session_ids() == ["s1"]
    gate.set()
    await task
    assert not tc.is_busy("s1") and tc.busy_session_ids() == []


async def test_unknown_origin_is_refused():
    with pytest.raises(ValueError, match="origin"):
        await TurnController().submit("s", lambda: asyncio.sleep(0), origin="carrier-pigeon")
