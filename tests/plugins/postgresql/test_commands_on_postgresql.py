"""Commands that read the session state without a runtime (`sessions ...`, the turn lines of
`status`) read the configured backend: on a host whose storage.url names the fleet's
PostgreSQL they see the sessions and turns another host made there, not an empty
sessions.sqlite of their own; a database they cannot reach is a clear error, not "no
sessions"."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins.postgresql.testing.pg_server import free_port
from tests.cli.run_cli import run_cli

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def _host_dir(root: Path, url: str, password: str) -> Path:
    state = root / "host-b"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({**QUIET, "storage": {"url": url}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={password}\n")
    return state


def _cli(state: Path, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    return run_cli(["--state-dir", str(state), *args], env=env, timeout=120)


async def test_sessions_and_status_on_another_host_read_the_fleets_database(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    maker = await runtime_for_test(tmp_path / "host-a", plugins={"postgresql": postgresql_plugin},
                                   config={"storage": {"url": server.url(name)}},
                                   environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                   provider=ScriptedProvider([]))
    try:
        sid = maker.open_session(None, tmp_path).id
        assert (await maker.run_turn("made on host a", session_id=sid)).state == "completed"
        queued = maker.lifecycle.admit(sid, "waiting on host a", "http")
        state = _host_dir(tmp_path, server.url(name), server.password)
        listed = _cli(state, "sessions", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        assert [row["id"] for row in json.loads(listed.stdout)] == [sid]
        shown = _cli(state, "sessions", "show", sid, "--json")
        assert shown.returncode == 0, shown.stderr
        assert "made on host a" in shown.stdout
        status = _cli(state, "status", "--json")
        assert status.returncode == 0, status.stderr
        lines = json.loads(status.stdout)
        turns = next(line for line in lines["lines"] if line["section"] == "sessions" and line["name"] == "turns")
        assert turns["detail"]["sessions"] == 1
        assert [q["turnId"] for q in turns["detail"]["queued"]] == [queued.turn_id]
        assert not (state / "sessions.sqlite").exists()  # nothing was read from (or made in) the embedded store
    finally:
        await maker.close()


def test_an_unreachable_database_is_a_clear_error_not_an_empty_list(tmp_path: Path):
    state = _host_dir(tmp_path, f"postgresql://agent@127.0.0.1:{free_port()}/nowhere", "secret-pw")
    listed = _cli(state, "sessions", "list")
    assert listed.returncode != 0
    assert "storage.url" in listed.stderr and "cannot be used" in listed.stderr
    assert "secret-pw" not in listed.stderr + listed.stdout
    status = _cli(state, "status", "--json")
    turns = next(line for line in json.loads(status.stdout)["lines"] if line["name"] == "turns"
                 and line["section"] == "sessions")
    assert turns["state"] == "error" and "storage.url" in turns["problems"][0]
