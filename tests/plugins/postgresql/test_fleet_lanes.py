"""Lanes across hosts on one PostgreSQL: runtimes with separate state directories (nothing
shared but the database) keep one session FIFO — a live owner's running turn on another host
is waited for, never interrupted — while a dead owner's queued turn is adopted and answered
first. Liveness comes from the database (the owner lease), not from a host's files."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.testing.scripted_provider import calls
from tests.agent.loop_harness import TestToolsPlugin, ToolLog, until


async def _host(state: Path, database: Any, script: Sequence[Any] = (), log: ToolLog | None = None) -> Any:
    server, name = database
    plugins = {"postgresql": postgresql_plugin, "tools": TestToolsPlugin(log or ToolLog())}
    return await runtime_for_test(state, plugins=plugins,
                                  config={"storage": {"url": server.url(name)}},
                                  environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                  provider=ScriptedProvider(script))


def _said(runtime: Any, session_id: str, kind: str) -> list[str]:
    return [e.text for e in runtime.sessions.load(session_id).entries if e.kind == kind]


async def test_a_live_owner_on_another_host_is_waited_for_never_interrupted(tmp_path: Path,
                                                                            postgresql_database: Any):
    log = ToolLog()
    release = log.hold("slow")
    one = await _host(tmp_path / "host-a", postgresql_database, [calls(("t.read", {"path": "slow"}))], log)
    two = await _host(tmp_path / "host-b", postgresql_database)
    try:
        sid = one.open_session(None, tmp_path).id
        first = asyncio.ensure_future(one.run_turn("slow first", session_id=sid))
        await log.running("slow")  # its turn is under way on host a
        second = asyncio.ensure_future(two.run_turn("second", session_id=sid))
        await until(lambda: len(two.lifecycle.ledger.lane(sid)) == 2)
        await asyncio.sleep(0.3)  # several of its lane polls
        assert [t.state for t in two.lifecycle.ledger.lane(sid)] == ["running", "queued"]
        release.set()
        assert [(await first).state, (await second).state] == ["completed", "completed"]
        assert _said(two, sid, "user") == ["slow first", "second"]
        audit = [(r["turn_id"], r["to_state"]) for r in two.lifecycle.ledger.audit_rows()]
        assert audit.index((second.result().turn_id, "running")) > audit.index((first.result().turn_id, "completed"))
    finally:
        await one.close()
        await two.close()


async def test_a_dead_owners_queued_turn_is_adopted_and_answered_first_on_another_host(tmp_path: Path,
                                                                                       postgresql_database: Any):
    dead = await _host(tmp_path / "host-a", postgresql_database)
    sid = dead.open_session(None, tmp_path).id
    orphan = dead.lifecycle.admit(sid, "admitted by the dead", "http")  # acknowledged, then the host died
    dead.lifecycle.lease.release()  # what a killed process's lost connection does to its lease
    live = await _host(tmp_path / "host-b", postgresql_database)
    try:
        result = await asyncio.wait_for(live.run_turn("mine", session_id=sid), 30)
        assert result.state == "completed"
        assert _said(live, sid, "user") == ["admitted by the dead", "mine"]  # FIFO across hosts
        adopted = live.lifecycle.ledger.get(orphan.turn_id)
        assert (adopted.state, adopted.owner) == ("completed", live.lifecycle.lease.owner)
    finally:
        await live.close()
        await dead.close()
