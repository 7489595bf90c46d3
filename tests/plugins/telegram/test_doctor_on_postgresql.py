"""`atomic-agent doctor` on a fleet host (storage.url set) reports Telegram's records in the
fleet's database, not the empty telegram.sqlite of its own state dir: the uncertain replies of
every host, and the poller that took the bot's lease last with whether it still holds it. It
writes nothing: no schema step is applied, no state file created, no lease taken."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.plugins.telegram.fleet_poller_lease import FleetPollerLease
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on, raw

BOT = 987654321
TOKEN = f"{BOT}:AAtesttokenvalue_0123456789abcdef"
QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def _doctor(state: Path, database: Any) -> dict[str, Any]:
    server, name = database
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({**QUIET, "storage": {"url": server.url(name)},
                                                   "telegram": {"enabled": True, "ownerUserId": 42}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\nTELEGRAM_BOT_TOKEN={TOKEN}\n")
    (state / ".env").chmod(0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), "doctor", "--json"], env=env, timeout=120)
    assert server.password not in result.stdout + result.stderr
    return {f["check"]: f for f in json.loads(result.stdout)}


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

        host_a = SharedDatabase(backend)
        store = DeliveryStore.of_fleet(host_a)
        (tmp_path / "host-a").mkdir()
        (tmp_path / "host-a" / ".env").write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
        poller = FleetPollerLease(host_a, lambda: store, tmp_path / "host-a")
        poller.acquire()
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
