"""A telegram.sqlite an older build wrote (tables deliveries, handled_updates, approval_requests,
offsets; handled updates keyed by update id alone; deliveries naming no bot) migrates in
place: the records keep their rows under the telegram_* names, and its handled updates and
deliveries become the bot's its offsets name (else no bot's), so an update it handled before
the upgrade is still not handled twice and a delivery it owed is still sent, by that bot
only. A fleet database an older build migrated is not read by a look (status, doctor) until
the step applies."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from atomic_agent.api import sqlite_migrations
from atomic_agent.plugins.telegram.delivery_database import db_path
from atomic_agent.plugins.telegram.delivery_schema import MIGRATIONS
from atomic_agent.plugins.telegram.delivery_store import PENDING, DeliveryStore

BOT = 5550001


def _older_file(state: Path, bots: tuple[int, ...]) -> None:
    conn = sqlite3.connect(db_path(state), isolation_level=None)
    try:
        sqlite_migrations.migrate(conn, MIGRATIONS[:3])  # the schema before handled updates were per bot
        conn.execute("INSERT INTO deliveries (kind, chat_id, body, state, created_at, updated_at) "
                     "VALUES ('report', 42, 'kept', 'pending', 1, 1)")
        conn.execute("INSERT INTO handled_updates (update_id, outcome, handled_at) VALUES (900, 'turn', 1)")
        for bot in bots:
            conn.execute("INSERT INTO offsets (bot_id, next_offset) VALUES (?, 901)", [bot])
    finally:
        conn.close()


def test_an_older_files_handled_updates_become_its_one_bots(tmp_path: Path) -> None:
    _older_file(tmp_path, (BOT,))
    store = DeliveryStore.of_state_dir(tmp_path, lambda: BOT)
    try:
        assert store.was_handled(BOT, 900) and not store.was_handled(BOT + 1, 900)
        assert store.saved_offset(BOT) == 901
        assert [(d.body, d.state) for d in store.recent()] == [("kept", PENDING)]
        store.mark_handled(BOT + 1, 900, "turn")  # another bot's update with the same id
        assert store.was_handled(BOT + 1, 900)
    finally:
        store.close()


def test_handled_updates_of_a_file_two_bots_polled_are_no_bots(tmp_path: Path) -> None:
    _older_file(tmp_path, (BOT, BOT + 1))  # which bot handled update 900 is not known
    store = DeliveryStore.of_state_dir(tmp_path, lambda: BOT)
    try:
        assert not store.was_handled(BOT, 900) and not store.was_handled(BOT + 1, 900)
        assert store.database.query("SELECT bot_id FROM telegram_handled_updates") == [{"bot_id": 0}]
    finally:
        store.close()


def test_a_fleet_database_an_older_build_migrated_keys_its_handled_updates_by_its_bot(postgresql_database: Any):
    from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
    from atomic_agent.plugins.telegram.delivery_schema import PG_STEPS
    from tests.plugins.postgresql.pg_kit import backend_on, raw

    backend = backend_on(postgresql_database)
    SharedDatabase(backend).ensure_schema("telegram", PG_STEPS[:1])  # what the older build applied
    with raw(postgresql_database) as conn:
        conn.execute("INSERT INTO telegram_handled_updates (update_id, outcome, handled_at) VALUES (900, 'turn', 1)")
        conn.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (%s, 901)", [BOT])
    store = DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT)  # this build: telegram.m002 applied now
    assert store.was_handled(BOT, 900) and not store.was_handled(BOT + 1, 900)
    store.mark_handled(BOT + 1, 900, "turn")
    assert store.was_handled(BOT + 1, 900)
    store.close()
    backend.close()


def _file_before_deliveries_by_bot(state: Path, bots: tuple[int, ...]) -> None:
    conn = sqlite3.connect(db_path(state), isolation_level=None)
    try:
        sqlite_migrations.migrate(conn, MIGRATIONS[:4])  # the schema before deliveries named their bot
        conn.execute("INSERT INTO telegram_deliveries (kind, chat_id, body, state, created_at, updated_at) "
                     "VALUES ('report', 42, 'owed', 'pending', 1, 1)")
        for bot in bots:
            conn.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (?, 901)", [bot])
    finally:
        conn.close()


def test_an_older_files_deliveries_become_its_one_bots_and_are_still_sent(tmp_path: Path) -> None:
    _file_before_deliveries_by_bot(tmp_path, (BOT,))
    store, other = DeliveryStore.of_state_dir(tmp_path, lambda: BOT), DeliveryStore.of_state_dir(tmp_path,
                                                                                               lambda: BOT + 1)
    try:
        owed = store.in_state(PENDING)
        assert [d.body for d in owed] == ["owed"] and other.in_state(PENDING) == []
        assert store.mark_attempting(owed[0].id, 1)
    finally:
        store.close()
        other.close()


def test_deliveries_of_a_file_two_bots_polled_are_no_bots(tmp_path: Path) -> None:
    _file_before_deliveries_by_bot(tmp_path, (BOT, BOT + 1))  # which bot owes it is not known
    store = DeliveryStore.of_state_dir(tmp_path, lambda: BOT)
    try:
        assert store.in_state(PENDING) == [] and store.counts()[PENDING] == 0
        assert store.database.query("SELECT bot_id FROM telegram_deliveries") == [{"bot_id": 0}]
    finally:
        store.close()


def test_a_fleet_database_before_deliveries_by_bot_is_not_read_by_a_look_then_migrated_as_its_bots(
        postgresql_database: Any):
    from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
    from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
    from atomic_agent.plugins.telegram.delivery_look import look_at_fleet
    from atomic_agent.plugins.telegram.delivery_schema import PG_STEPS
    from tests.plugins.postgresql.pg_kit import backend_on, raw

    backend = backend_on(postgresql_database)
    shared = SharedDatabase(backend)
    shared.ensure_schema("telegram", PG_STEPS[:2])  # what the older build applied
    with raw(postgresql_database) as conn:
        conn.execute("INSERT INTO telegram_deliveries (kind, chat_id, body, state, created_at, updated_at) "
                     "VALUES ('report', 42, 'owed', 'uncertain', 1, 1)")
        conn.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (%s, 901)", [BOT])
        steps = conn.execute(f"SELECT COUNT(*) FROM {MIGRATIONS_TABLE}").fetchone()[0]
    # status and doctor say the records are an older build's, and apply nothing
    look = look_at_fleet(shared, BOT)
    assert look.ran and look.older is not None and "telegram.m003_deliveries_by_bot not applied" in look.older
    assert sum(look.counts.values()) == 0
    with raw(postgresql_database) as conn:
        assert conn.execute(f"SELECT COUNT(*) FROM {MIGRATIONS_TABLE}").fetchone()[0] == steps
    store = DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT)  # this build: telegram.m003 applied now
    other = DeliveryStore.of_fleet(SharedDatabase(backend), lambda: BOT + 1)
    assert store.counts()["uncertain"] == 1 and other.counts()["uncertain"] == 0
    assert shared.pending_steps("telegram", PG_STEPS) == []
    assert look_at_fleet(shared, BOT).counts["uncertain"] == 1 and look_at_fleet(shared, BOT + 1).older is None
    store.close()
    other.close()
    backend.close()
