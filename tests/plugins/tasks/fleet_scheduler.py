"""A scheduler host of a fleet on PostgreSQL, as a child process of a test.

    python -m tests.plugins.tasks.fleet_scheduler STATE_DIR URL drain N   (password in PGTEST_PASSWORD)
        prints `ready`, then ticks until N tasks of the fleet completed; prints `claimed K` (its share)
    python -m tests.plugins.tasks.fleet_scheduler STATE_DIR URL hang
        ticks until it runs a task whose turn never ends; prints `ready <task id> <turn id>` and waits
        to be killed
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from tests.plugins.tasks.task_kit import TEST_TASKS_CONFIG

DRAIN_TIMEOUT_S = 120


async def fleet_runtime(state: Path, url: str, password: str, provider: ScriptedProvider) -> Any:
    return await runtime_for_test(state, plugins={"postgresql": postgresql_plugin, "tasks": tasks_plugin},
                                  config={"storage": {"url": url}, "tasks": TEST_TASKS_CONFIG},
                                  environ={"ATOMIC_AGENT_STORAGE_PASSWORD": password}, provider=provider)


async def drain(state: Path, url: str, expected: int) -> None:
    runtime = await fleet_runtime(state, url, os.environ["PGTEST_PASSWORD"], ScriptedProvider([], delay_s=0.1))
    service = runtime.service("tasks")
    print("ready", flush=True)
    claimed = 0
    loop = asyncio.get_running_loop()
    deadline = loop.time() + DRAIN_TIMEOUT_S
    while service.store.counts()["completed"] < expected and loop.time() < deadline:
        claimed += (await service.tick()).claimed
        await asyncio.sleep(0.01)
    print(f"claimed {claimed}", flush=True)
    await runtime.close()


async def hang(state: Path, url: str) -> None:
    runtime = await fleet_runtime(state, url, os.environ["PGTEST_PASSWORD"], ScriptedProvider([], delay_s=3600))
    service = runtime.service("tasks")
    ticking = asyncio.ensure_future(service.tick())
    while True:
        running = service.store.running()
        keyed = runtime.turn_for_key(running[0].attempt_key) if running else None
        if keyed is not None:
            print(f"ready {running[0].id} {keyed.turn_id}", flush=True)
            break
        await asyncio.sleep(0.02)
    await ticking


if __name__ == "__main__":
    where, database, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    asyncio.run(drain(where, database, int(sys.argv[4])) if mode == "drain" else hang(where, database))
