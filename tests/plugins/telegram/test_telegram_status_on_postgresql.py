"""`telegram status` and `doctor` on a fleet host (storage.url set) read the fleet's records:
the process that polls the bot on another host (the `telegram:<bot id>` lease, held right
now or not, read from pg_locks) and the deliveries there, not the empty telegram.sqlite of
its own state dir. A poller that stopped stays named, with its lease said to be free.
Doctor and the `atomic-agent status` line write nothing: no schema step is applied, no
state file created, no lease taken."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.plugins.telegram.fleet_poller_lease import FleetPollerLease
from atomic_agent.plugins.telegram.telegram_commands import polling_line
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on, raw

BOT = 123456789
TOKEN = f"{BOT}:AAtesttokenvalue_0123456789abcdef"


def _status(state: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), "telegram", "status", "--json"], env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _host_a_polls(host_a: SharedDatabase, tmp_path: Path) -> tuple[DeliveryStore, FleetPollerLease]:
    """Host a's records and its poller, holding the bot's lease."""
    store = DeliveryStore.of_fleet(host_a, lambda: BOT)
    (tmp_path / "host-a").mkdir()
    (tmp_path / "host-a" / ".env").write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
    poller = FleetPollerLease(host_a, lambda: store, tmp_path / "host-a")
    poller.acquire()
    return store, poller


def test_telegram_status_on_host_b_shows_host_a_polling_and_the_fleets_deliveries(
        tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    backend = backend_on(postgresql_database)
    try:
        host_a = SharedDatabase(backend)
        store, poller = _host_a_polls(host_a, tmp_path)
        store.record("notice", 42, "hello from host a", False)
        state = tmp_path / "host-b"
        state.mkdir()
        (state / "config.json").write_text(json.dumps({"storage": {"url": server.url(name)}}))
        (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\nTELEGRAM_BOT_TOKEN={TOKEN}\n")
        status = _status(state)
        assert status["polledBy"]["live"] is True and status["polledBy"]["pid"] == os.getpid()
        assert status["polledByPid"] == os.getpid() and sum(status["deliveries"].values()) == 1
        assert polling_line(status).endswith("(lease held)")
        poller.release()  # host a stopped polling: the record stays, the lease is free
        status = _status(state)
        assert status["polledBy"]["live"] is False and status["polledByPid"] is None
        assert status["polledBy"]["pid"] == os.getpid()  # still named, until another host takes over
        assert polling_line(status).endswith("(lease free: no live poller)")
        assert poller.still_held() is False and host_a.lease(f"telegram:{BOT}") is not None  # looking took nothing
        store.close()
        assert not (state / "telegram.sqlite").exists()
    finally:
        backend.close()


QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def _fleet_cli(state: Path, database: Any, *args: str) -> Any:
    """`atomic-agent <args>` on a fleet host with Telegram on; the password never shows."""
    server, name = database
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({**QUIET, "storage": {"url": server.url(name)},
                                                   "telegram": {"enabled": True, "ownerUserId": 42}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\nTELEGRAM_BOT_TOKEN={TOKEN}\n")
    (state / ".env").chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), *args], env=env, timeout=120)
    assert server.password not in result.stdout + result.stderr
    return json.loads(result.stdout)


def _doctor(state: Path, database: Any) -> dict[str, Any]:
    return {f["check"]: f for f in _fleet_cli(state, database, "doctor", "--json")}


def test_doctor_on_a_fleet_host_reads_the_fleets_deliveries_and_poller(tmp_path: Path, postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        backend.open_store().close()  # the core's schema, not Telegram's
        with raw(postgresql_database) as conn:
            steps = conn.execute(f"select count(*) from {MIGRATIONS_TABLE}").fetchone()[0]
        fresh = _doctor(tmp_path / "host-b", postgresql_database)
        assert fresh["telegram channel"]["detail"] == "no host of the fleet ran the Telegram channel yet"
        with raw(postgresql_database) as conn:  # read-only: Telegram's steps are not applied by looking
            assert conn.execute(f"select count(*) from {MIGRATIONS_TABLE}").fetchone()[0] == steps

        store, poller = _host_a_polls(SharedDatabase(backend), tmp_path)
        reply = store.record("reply", 42, "mid-send", False)
        store.mark_attempting(reply.id, 1)
        store.uncertain(reply.id, "the process stopped")
        found = _doctor(tmp_path / "host-b", postgresql_database)
        assert found["telegram deliveries"]["level"] == "warn" and found["telegram deliveries"]["detail"].startswith("1 ")
        assert found["telegram channel"]["detail"] == f"polled by pid {os.getpid()} on {os.uname().nodename} (lease held)"
        poller.release()
        store.close()
        found = _doctor(tmp_path / "host-b", postgresql_database)
        assert "(lease free: no live poller" in found["telegram channel"]["detail"]
        assert not (tmp_path / "host-b" / "telegram.sqlite").exists()
    finally:
        backend.close()


def _status_line(state: Path, database: Any) -> dict[str, Any]:
    lines = _fleet_cli(state, database, "status", "--json")["lines"]
    return next(line for line in lines if line["section"] == "channels" and line["name"] == "telegram")


def test_the_status_line_on_a_fleet_host_reads_the_fleets_records_without_writing(
        tmp_path: Path, postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        backend.open_store().close()  # the core's schema, not Telegram's
        fresh = _status_line(tmp_path / "host-b", postgresql_database)
        assert fresh["state"] == "warn" and fresh["detail"]["deliveries"]["pending"] == 0
        with raw(postgresql_database) as conn:  # looking applied no plugin's steps (Telegram's, the tasks', ...)
            assert conn.execute(f"select name from {MIGRATIONS_TABLE} where name like '%.%'").fetchall() == []
            assert conn.execute("select to_regclass('telegram_deliveries')").fetchone()[0] is None

        store, poller = _host_a_polls(SharedDatabase(backend), tmp_path)
        reply = store.record("reply", 42, "mid-send", False)
        store.mark_attempting(reply.id, 1)
        store.uncertain(reply.id, "the process stopped")
        line = _status_line(tmp_path / "host-b", postgresql_database)
        assert line["state"] == "ok" and f"(pid {os.getpid()} on {os.uname().nodename})" in line["summary"]
        assert line["detail"]["deliveries"]["uncertain"] == 1
        assert [p for p in line["problems"] if p.startswith(f"telegram delivery #{reply.id} reply uncertain")]
        poller.release()
        store.close()
        assert _status_line(tmp_path / "host-b", postgresql_database)["state"] == "warn"  # nobody polls now
        assert not (tmp_path / "host-b" / "telegram.sqlite").exists()
    finally:
        backend.close()
