"""The fleet_takeover tick: a live host adopts a dead host's admitted work although no new
message arrives for its session — and leaves a live host's work alone."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins.postgresql.fleet_takeover import TICK_NAME, dead_owners


async def _host(state: Path, database: Any) -> Any:
    server, name = database
    return await runtime_for_test(state, plugins={"postgresql": postgresql_plugin},
                                  config={"storage": {"url": server.url(name)}},
                                  environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                  provider=ScriptedProvider([]))


async def test_a_dead_hosts_queued_message_is_answered_by_the_tick_with_no_new_message(tmp_path: Path,
                                                                                      postgresql_database: Any):
    dead = await _host(tmp_path / "host-a", postgresql_database)
    live = await _host(tmp_path / "host-b", postgresql_database)
    try:
        sid = dead.open_session(None, tmp_path).id
        orphan = dead.lifecycle.admit(sid, "admitted, then the host died", "http")
        backend = live.service("session_backend")
        assert dead_owners(backend) == []  # its owner is alive: nothing to take over
        assert await live.run_tick(TICK_NAME)
        assert live.lifecycle.ledger.get(orphan.turn_id).state == "queued"
        dead.lifecycle.lease.release()  # what a killed process's lost connection does to its lease
        assert dead_owners(backend) == [dead.lifecycle.lease.owner]
        assert await live.run_tick(TICK_NAME)
        for _ in range(300):
            if live.lifecycle.ledger.get(orphan.turn_id).state == "completed":
                break
            await asyncio.sleep(0.05)
        adopted = live.lifecycle.ledger.get(orphan.turn_id)
        assert (adopted.state, adopted.owner) == ("completed", live.lifecycle.lease.owner)
        assert live.answer_of(orphan.turn_id).settled
        assert dead_owners(backend) == []
    finally:
        await live.close()
        await dead.close()


async def test_the_tick_is_not_registered_on_sqlite(tmp_path: Path):
    runtime = await runtime_for_test(tmp_path / "state", plugins={"postgresql": postgresql_plugin},
                                     provider=ScriptedProvider([]))
    try:
        assert TICK_NAME not in runtime.ticks.specs
    finally:
        await runtime.close()
