"""SIGKILL of a runtime process on PostgreSQL: its connection dies with it, so its owner
lease is gone and any other host that needs the session takes over — the turn it left
running is interrupted (never re-run, never waited on for ever), the message it had accepted
and queued is adopted and answered, and the new message after it; FIFO, each once."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test

REPO = Path(__file__).resolve().parents[3]


async def test_a_killed_hosts_work_is_taken_over_by_another_host_in_order(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    child = subprocess.Popen([sys.executable, "-m", "tests.plugins.postgresql.killed_host", str(tmp_path / "host-a"),
                              server.url(name)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PGTEST_PASSWORD": server.password})
    try:
        line = await asyncio.wait_for(asyncio.to_thread(child.stdout.readline), 60)  # type: ignore[union-attr]
        assert line.startswith("ready "), child.stderr.read() if child.poll() is not None else line  # type: ignore[union-attr]
        _, sid, running_id, queued_id = line.split()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    live = await runtime_for_test(tmp_path / "host-b", plugins={"postgresql": postgresql_plugin},
                                  config={"storage": {"url": server.url(name)}},
                                  environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                  provider=ScriptedProvider([]))
    try:
        result = await asyncio.wait_for(live.run_turn("after the kill", session_id=sid), 60)
        assert result.state == "completed"
        lane = live.lifecycle.ledger.lane(sid)
        assert [(t.turn_id, t.state) for t in lane][:2] == [(running_id, "interrupted"), (queued_id, "completed")]
        assert [(t.text, t.state) for t in lane] == [("running when killed", "interrupted"),
                                                    ("queued when killed", "completed"),
                                                    ("after the kill", "completed")]
        users = [e.text for e in live.sessions.load(sid).entries if e.kind == "user"]
        assert users == ["running when killed", "queued when killed", "after the kill"]  # each once, in order
        assert live.lifecycle.ledger.get(queued_id).owner == live.lifecycle.lease.owner
    finally:
        await live.close()
