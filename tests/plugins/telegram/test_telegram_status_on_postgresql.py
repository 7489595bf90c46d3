"""`telegram status` on a fleet host (storage.url set) reads the fleet's records: the process
that polls the bot on another host (the `telegram:<bot id>` lease, held right now or not,
read from pg_locks) and the deliveries there, not the empty telegram.sqlite of its own
state dir. A poller that stopped stays named, with its lease said to be free."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.plugins.telegram.fleet_poller_lease import FleetPollerLease
from atomic_agent.plugins.telegram.telegram_commands import polling_line
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on

BOT = 123456789
TOKEN = f"{BOT}:AAtesttokenvalue_0123456789abcdef"


def _status(state: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), "telegram", "status", "--json"], env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_telegram_status_on_host_b_shows_host_a_polling_and_the_fleets_deliveries(
        tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    backend = backend_on(postgresql_database)
    try:
        host_a = SharedDatabase(backend)
        store = DeliveryStore.of_fleet(host_a)
        (tmp_path / "host-a").mkdir()
        (tmp_path / "host-a" / ".env").write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
        poller = FleetPollerLease(host_a, lambda: store, tmp_path / "host-a")
        poller.acquire()
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
