"""A runtime process on PostgreSQL that admits work and then hangs, for a test to SIGKILL:
it starts a turn whose model call never returns, queues a second message behind it, prints
`ready <session id> <running turn id> <queued turn id>` and waits to be killed.

Usage: python -m tests.plugins.postgresql.killed_host STATE_DIR URL   (password in the env)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test


async def main(state: Path, url: str) -> None:
    runtime = await runtime_for_test(state, plugins={"postgresql": postgresql_plugin},
                                     config={"storage": {"url": url}},
                                     environ={"ATOMIC_AGENT_STORAGE_PASSWORD": os.environ["PGTEST_PASSWORD"]},
                                     provider=ScriptedProvider([], delay_s=3600))
    sid = runtime.open_session(None, state).id
    running = asyncio.ensure_future(runtime.run_turn("running when killed", session_id=sid))
    while not runtime.lifecycle.ledger.lane(sid, ("running",)):
        await asyncio.sleep(0.02)
    queued = runtime.lifecycle.admit(sid, "queued when killed", "http")
    first = runtime.lifecycle.ledger.lane(sid, ("running",))[0]
    print(f"ready {sid} {first.turn_id} {queued.turn_id}", flush=True)
    await running


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), sys.argv[2]))
