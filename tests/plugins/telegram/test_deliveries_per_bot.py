"""Two fleets with different bots on one PostgreSQL database: each delivery names the bot that
owes it, so each bot's store lists (resumes), sends, settles and counts only its own — no
pending delivery is sent with another bot's token — and `telegram status` on a host counts
only its token's bot's. `telegram status` on a fleet host writes nothing: no Telegram schema
step is applied and no lease is taken (a sender lease, the poller lease)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from atomic_agent.api import ConfigBlock
from atomic_agent.config.config_file import load_config
from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
from atomic_agent.plugins.telegram.delivery_store import ATTEMPTING, PENDING, UNCERTAIN, DeliveryStore
from atomic_agent.plugins.telegram.telegram_commands import offline_status
from atomic_agent.plugins.telegram.telegram_config import TELEGRAM_BLOCK, TelegramConfig
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on, raw

BOT_A, BOT_B = 5550001, 5550002


def _token(bot: int) -> str:
    return f"{bot}:AAtesttokenvalue_0123456789abcdef"


def _fleet_host(state: Path, database: Any, bot: int) -> Path:
    server, name = database
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"storage": {"url": server.url(name)}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\nTELEGRAM_BOT_TOKEN={_token(bot)}\n")
    return state


def _status(state: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(state), "telegram", "status", "--json"], env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_each_bot_resumes_settles_and_counts_only_its_own_deliveries(tmp_path: Path, postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        a, b = (DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT_A),
                DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT_B))
        mine = a.record("report", 42, "bot a's report", False)
        theirs = b.record("report", 43, "bot b's report", False)
        reply = b.open_reply("turn-b", 43, "s-b")
        assert [d.id for d in a.in_state(PENDING)] == [mine.id]  # what bot a's channel resumes
        assert [d.id for d in b.in_state(PENDING)] == [theirs.id, reply.id]
        assert not a.mark_attempting(theirs.id, 1)  # never sent with bot a's token
        assert b.get(theirs.id).state == PENDING  # type: ignore[union-attr]
        assert a.counts()[PENDING] == 1 and b.counts()[PENDING] == 2
        assert [d.id for d in a.recent()] == [mine.id]

        # bot b's sender dies mid-send: bot a's fleet leaves that attempt to bot b's
        assert b.mark_attempting(theirs.id, 1)
        b.close()
        assert a.settle_interrupted() == 0 and a.counts()[ATTEMPTING] == 0
        b = DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT_B)
        assert b.settle_interrupted() == 1 and b.counts()[UNCERTAIN] == 1
        a.close()
        b.close()

        host_a = _status(_fleet_host(tmp_path / "a", postgresql_database, BOT_A))
        host_b = _status(_fleet_host(tmp_path / "b", postgresql_database, BOT_B))
        assert host_a["deliveries"][PENDING] == 1 and sum(host_a["deliveries"].values()) == 1
        assert host_a["needsAttention"] == []
        assert host_b["deliveries"][PENDING] == 1 and host_b["deliveries"][UNCERTAIN] == 1
        assert [d["id"] for d in host_b["needsAttention"]] == [theirs.id]
    finally:
        backend.close()


class _WriteRefusingFleet(SharedDatabase):
    """The real shared database, with every way to write or lock refused: what a write-free
    reader may use is read_only, pending_steps and lease_held."""

    def refused(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("telegram status wrote to (or took a lease on) the fleet's database")

    ensure_schema = qmark_engine = transaction = connection = lease = refused


def _step_names(database: Any) -> list[str]:
    with raw(database) as conn:
        return [r[0] for r in conn.execute(f"select name from {MIGRATIONS_TABLE} order by name")]


def test_telegram_status_on_a_fleet_host_applies_no_step_and_takes_no_lease(
        tmp_path: Path, postgresql_database: Any):
    backend = backend_on(postgresql_database)
    try:
        backend.open_store().close()  # the core's schema, not Telegram's
        steps = _step_names(postgresql_database)
        state = _fleet_host(tmp_path / "host", postgresql_database, BOT_A)
        status = _status(state)
        assert status["deliveries"] == dict.fromkeys(status["deliveries"], 0) and status["polledBy"] is None
        assert _step_names(postgresql_database) == steps  # looking applied none of Telegram's steps
        assert not (state / "telegram.sqlite").exists()

        config = load_config(state, {TELEGRAM_BLOCK: ConfigBlock(key=TELEGRAM_BLOCK, cls=TelegramConfig)},
                             write=False)
        guarded = _WriteRefusingFleet(backend)
        assert offline_status(state, config, guarded)["deliveries"][PENDING] == 0  # no tables yet: nothing taken
        store = DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT_A)  # a host ran the channel
        store.record("report", 42, "owed", False)
        store.close()
        assert offline_status(state, config, guarded)["deliveries"][PENDING] == 1
    finally:
        backend.close()
