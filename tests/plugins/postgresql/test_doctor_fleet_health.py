"""`atomic-agent doctor` on a fleet host checks every plugin's schema steps in the fleet's
database, per namespace ("storage.schema": pending is a warning, a newer build's an error
naming the plugin), and the leases' health ("storage.leases": a dead owner that still holds a
queued turn is a warning saying who adopts it; a fleet whose owners all live is ok, with the
counts). Read through the real console script; it writes nothing and takes no lease."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on, raw

QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def _doctor(root: Path, database: Any) -> dict[str, Any]:
    server, name = database
    state = root / "host-b"
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({**QUIET, "storage": {"url": server.url(name)}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), "doctor", "--json"], env=env, timeout=120)
    assert server.password not in result.stdout + result.stderr
    return {f["check"]: f for f in json.loads(result.stdout)}


def _migrated_core(database: Any) -> None:
    backend = backend_on(database)
    backend.open_store().close()
    backend.close()


def test_a_plugins_pending_steps_are_a_warning_naming_them(tmp_path: Path, postgresql_database: Any):
    _migrated_core(postgresql_database)
    with raw(postgresql_database) as conn:
        before = conn.execute(f"select count(*) from {MIGRATIONS_TABLE}").fetchone()[0]
    schema = _doctor(tmp_path, postgresql_database)["storage.schema"]
    assert schema["level"] == "warn" and "tasks: tasks.m001_" in schema["detail"], schema
    assert "telegram: telegram.m001_" in schema["detail"] and "first uses the database" in schema["advice"]
    with raw(postgresql_database) as conn:  # read-only: nothing applied
        assert conn.execute(f"select count(*) from {MIGRATIONS_TABLE}").fetchone()[0] == before


def test_a_plugins_step_from_a_newer_build_is_an_error_naming_the_plugin(tmp_path: Path, postgresql_database: Any):
    _migrated_core(postgresql_database)
    with raw(postgresql_database) as conn:
        conn.execute(f"insert into {MIGRATIONS_TABLE} (name, build) values ('tasks.m999_later', '9.9.9')")
    findings = _doctor(tmp_path, postgresql_database)
    schema = findings["storage.schema"]
    assert schema["level"] == "error" and "the tasks plugin's tasks.m999_later" in schema["detail"], schema
    assert "9.9.9" in schema["detail"] and "upgrade atomic-agent" in schema["advice"]
    assert findings["storage.postgresql"]["level"] == "ok"  # the core's own steps are this build's


async def test_a_dead_owner_holding_a_queued_turn_is_a_warning_and_a_live_fleet_is_ok(
        tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    host_a = await runtime_for_test(tmp_path / "host-a", plugins={"postgresql": postgresql_plugin},
                                    config={"storage": {"url": server.url(name)}},
                                    environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                    provider=ScriptedProvider([]))
    try:
        sid = host_a.open_session(None, tmp_path).id
        queued = host_a.lifecycle.admit(sid, "waiting on host a", "http")
        leases = _doctor(tmp_path, postgresql_database)["storage.leases"]
        assert leases["level"] == "ok", leases
        assert "1 owner(s) with live work (1 turns/steers), 0 dead" in leases["detail"]
        with raw(postgresql_database) as conn:  # its owner died: no session holds that owner's lease
            conn.execute("update turns set owner = 'gone-host:4242:dead' where turn_id = %s", [queued.turn_id])
        leases = _doctor(tmp_path, postgresql_database)["storage.leases"]
        assert leases["level"] == "warn" and "gone-host:4242:dead (1 queued/running" in leases["detail"], leases
        assert "takeover tick adopts it within storage.takeoverIntervalS" in leases["advice"]
        assert "start one" in leases["advice"]
    finally:
        await host_a.close()

