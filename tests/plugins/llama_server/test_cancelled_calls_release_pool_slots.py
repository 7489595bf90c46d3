"""A cancelled llama-server call gives its pool slot back, wherever the cancel lands.

httpcore 1.0.9 strands a connection when a request is cancelled between getting a fresh
connection and sending (state NEW, never reused, never reaped), or while its response is
being closed (ACTIVE, still booked to the finished request). `serve` cancels calls all the
time (the next turn aborts the session's memory reflection), so stranded slots piled up
until the pool (100) was full and every turn waited out the pool timeout.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from atomic_agent.api import CompletionRequest
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider
from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, settle

REPLY = json.dumps([{"tool": "reply", "args": {"text": "ok"}}])
REQUEST = CompletionRequest(prompt="hello", n_predict=8, stream=False)


def unusable(pool: Any) -> list[str]:
    """Connections the pool can neither hand out again nor reap (none is in flight here)."""
    return [conn.info() for conn in pool.connections if not conn.is_idle() and not conn.is_closed()]


async def cancel_after(client: LlamaServerClient, steps: int) -> None:
    """Start a timed non-streamed completion (as the reflection runs it), cancel it after `steps`
    turns of the event loop, and wait for it to end."""
    call = asyncio.ensure_future(asyncio.wait_for(client.complete(REQUEST), 30))
    for _ in range(steps):
        await asyncio.sleep(0)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)


async def test_a_cancel_at_any_point_of_a_call_leaves_no_unusable_connection() -> None:
    # every early step count lands the cancel at another suspension point of the call: the pool
    # assigning a connection, connecting, the connection's state lock, sending, reading, closing
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        pool = client.transport.pool
        for _ in range(3):
            for steps in range(1, 40):
                await cancel_after(client, steps)
        left = unusable(pool)
        books = len(pool._requests)
        done = await client.complete(REQUEST)  # and the pool still serves
        await client.aclose()
    assert left == [] and books == 0
    assert len(pool.connections) <= 1 and client.transport.in_flight == 0
    assert done.content


async def test_reclaiming_never_takes_the_connection_of_a_call_still_running() -> None:
    with FakeLlamaServer(script=[Delay(0.3, "slow answer")], default_reply="quick") as fake:
        client = LlamaServerClient(fake.base_url)
        slow = asyncio.ensure_future(client.complete(REQUEST))
        while not fake.requests:  # the slow call has reached the server
            await asyncio.sleep(0.01)
        for steps in range(1, 40):  # cancelled calls around it, each one reclaiming
            await cancel_after(client, steps)
        answer = await slow
        await client.aclose()
    assert answer.content == "slow answer"


async def test_reflections_aborted_by_the_next_turn_leave_the_pool_bounded(tmp_path: Path) -> None:
    with FakeLlamaServer(default_reply=REPLY) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        runtime = make_memory_runtime(tmp_path, provider)
        session = (await runtime.run_turn("hello", working_dir=tmp_path)).session_id
        turns = 160
        for turn in range(turns):
            for _ in range(turn % 40):  # the gap a client leaves between two turns, in loop steps
                await asyncio.sleep(0)
            await runtime.run_turn("and again", session_id=session)
        await settle(runtime)
        pool = provider.client.transport.pool
        left, size = unusable(pool), len(pool.connections)
        completions = sum(1 for r in fake.requests if r.path == "/completion")
        metrics = runtime.service("metrics")
        aborted = metrics.counter_value("agent.memory.reflection", outcome="aborted")
        await runtime.close()
    # reflections did reach the server and many were cut off (a turn now waits for its shared fsync
    # off the loop, so more reflections finish before the next turn: 19 to 43 of 160 were aborted)
    assert aborted >= 10 and completions > turns + 1
    assert left == [] and size <= 2  # a turn's connection and a reflection's, at most
