"""`telegram status`, the `atomic-agent status` line and doctor's Telegram lines on one host
(no storage.url) look at telegram.sqlite without writing it: a missing file is no deliveries
yet and is not created; an older build's file is not migrated (it is said to be upgraded by
the next `telegram` start) and stays byte for byte as it was; a current file is read through
the store's own read methods on a read-only connection, which refuses a write."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ConfigBlock, sqlite_migrations
from atomic_agent.config.config_file import load_config
from atomic_agent.plugins.telegram.delivery_database import DeliveryFileLook, db_path
from atomic_agent.plugins.telegram.delivery_look import NO_DELIVERIES
from atomic_agent.plugins.telegram.delivery_schema import MIGRATIONS
from atomic_agent.plugins.telegram.delivery_store import UNCERTAIN, DeliveryStore
from atomic_agent.plugins.telegram.doctor_findings import telegram_findings
from atomic_agent.plugins.telegram.telegram_commands import offline_status, status_lines
from atomic_agent.plugins.telegram.telegram_config import TELEGRAM_BLOCK, TelegramConfig
from tests.cli.run_cli import run_cli

BOT = 5550001
TOKEN = f"{BOT}:AAtesttokenvalue_0123456789abcdef"


def _host(state: Path) -> Any:
    """A state dir with Telegram enabled and a token, and its config as the commands load it."""
    (state / "config.json").write_text(json.dumps({"telegram": {"enabled": True, "ownerUserId": 42}}))
    (state / ".env").write_text(f"TELEGRAM_BOT_TOKEN={TOKEN}\n")
    (state / ".env").chmod(0o600)
    return load_config(state, {TELEGRAM_BLOCK: ConfigBlock(key=TELEGRAM_BLOCK, cls=TelegramConfig)}, write=False)


def _records(state: Path) -> bytes:
    """telegram.sqlite as it lies (a reader of a WAL-mode file may leave SQLite's -shm index
    and an empty -wal beside it, as every reader does: no record is in them)."""
    return db_path(state).read_bytes()


def test_telegram_status_on_a_single_host_creates_no_file(tmp_path: Path) -> None:
    config = _host(tmp_path)
    status = offline_status(tmp_path, config)
    assert status["deliveriesUnread"] == NO_DELIVERIES and sum(status["deliveries"].values()) == 0
    (line,) = status_lines(tmp_path, config)
    assert line["detail"]["deliveriesUnread"] == NO_DELIVERIES
    assert [f.check for f in telegram_findings(tmp_path)] == ["telegram channel"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    result = run_cli(["--state-dir", str(tmp_path), "telegram", "status"], env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"deliveries: {NO_DELIVERIES}" in result.stdout
    assert list(tmp_path.glob("telegram.sqlite*")) == []


def _older_file(state: Path) -> None:
    conn = sqlite3.connect(db_path(state), isolation_level=None)
    try:
        sqlite_migrations.migrate(conn, MIGRATIONS[:4])  # the schema before deliveries named their bot
        conn.execute("INSERT INTO telegram_deliveries (kind, chat_id, body, state, created_at, updated_at) "
                     "VALUES ('reply', 42, 'cut off', 'uncertain', 1, 1)")
        conn.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (?, 901)", [BOT])
    finally:
        conn.close()


def test_telegram_status_on_a_single_host_leaves_an_old_schema_as_it_is(tmp_path: Path) -> None:
    config = _host(tmp_path)
    _older_file(tmp_path)
    before = _records(tmp_path)
    status = offline_status(tmp_path, config)
    assert "older build's" in status["deliveriesUnread"] and "upgrades it" in status["deliveriesUnread"]
    (line,) = status_lines(tmp_path, config)
    assert status["deliveriesUnread"] in line["problems"]
    older = [f for f in telegram_findings(tmp_path) if f.check == "telegram deliveries"]
    assert [f.detail for f in older] == [status["deliveriesUnread"]]
    assert _records(tmp_path) == before  # not migrated, no WAL switch: byte for byte as it was
    conn = sqlite3.connect(f"file:{db_path(tmp_path)}?mode=ro", uri=True)
    assert sqlite_migrations.read_schema_state(conn).version == 4
    conn.close()

    DeliveryStore.of_state_dir(tmp_path, lambda: BOT).close()  # the next `telegram` start upgrades it
    status = offline_status(tmp_path, config)
    assert status["deliveriesUnread"] is None and status["deliveries"][UNCERTAIN] == 1
    assert [d["state"] for d in status["needsAttention"]] == [UNCERTAIN]


def test_a_current_file_is_read_through_the_stores_reads_and_a_look_refuses_to_write(tmp_path: Path) -> None:
    config = _host(tmp_path)
    store = DeliveryStore.of_state_dir(tmp_path, lambda: BOT)
    reply = store.record("reply", 42, "cut off", False)
    store.mark_attempting(reply.id, 1)
    store.uncertain(reply.id, "the process stopped")
    store.record("report", 42, "another bot's", False)
    store.close()
    before = _records(tmp_path)
    status = offline_status(tmp_path, config)
    assert status["deliveriesUnread"] is None and status["deliveries"][UNCERTAIN] == 1
    assert [d["id"] for d in status["needsAttention"]] == [reply.id]
    found = {f.check: f for f in telegram_findings(tmp_path)}
    assert found["telegram deliveries"].level == "warn" and found["telegram deliveries"].detail.startswith("1 ")
    look = DeliveryFileLook(db_path(tmp_path))
    try:
        with pytest.raises(sqlite3.OperationalError, match="read-only"):
            DeliveryStore.looking(look, BOT).record("report", 42, "refused", False)
    finally:
        look.close()
    assert _records(tmp_path) == before
