"""One bot's Telegram records on the fleet's database as `telegram status`, `atomic-agent
status` and `doctor` read them, writing nothing: one READ ONLY transaction
(`shared.read_only()`), no schema step applied, no lease taken (whether the poller's lease is
held is read from pg_locks by `lease_held`).

A database no host ran the channel on has no Telegram tables yet: nothing to count. One an
older build migrated (telegram.m003 not applied) has deliveries without their bot: they are
read as the bot that step gives them (the one bot the offsets name, else 0)."""

from __future__ import annotations

from typing import Any

import attrs

from atomic_agent.plugins.postgresql.postgresql_contract import SharedDatabase

from .delivery_schema import LEGACY_BOT, PG_STEPS
from .delivery_store import COLUMNS, FAILED, STATES, UNCERTAIN, Delivery, delivery_of
from .fleet_poller_lease import poller_lease

DELIVERIES_BY_BOT_STEP = "telegram.m003_deliveries_by_bot"
ATTENTION_SHOWN = 20  # the newest uncertain and failed deliveries listed


@attrs.frozen
class FleetDeliveryRecords:
    ran: bool  # some host of the fleet ran the channel (its tables exist)
    counts: dict[str, int]  # the bot's deliveries by state
    attention: list[Delivery]  # its newest uncertain and failed ones, oldest first
    poller: dict[str, Any] | None  # who took the bot's poller lease last {host, pid, since, live}, or None


def read_fleet_records(shared: SharedDatabase, bot_id: int) -> FleetDeliveryRecords:
    """`bot_id`'s deliveries and poller; SessionStoreError when the database cannot be read or
    a newer build migrated Telegram's tables."""
    pending = shared.pending_steps("telegram", PG_STEPS)
    counts = dict.fromkeys(STATES, 0)
    with shared.read_only() as conn:
        if conn.execute("SELECT to_regclass('telegram_deliveries')").fetchone()[0] is None:
            return FleetDeliveryRecords(False, counts, [], None)
        bot = LEGACY_BOT if DELIVERIES_BY_BOT_STEP in pending else "bot_id"
        for state, n in conn.execute(f"SELECT state, COUNT(*) FROM telegram_deliveries WHERE {bot} = %s "
                                     "GROUP BY state", [bot_id]).fetchall():
            counts[state] = int(n)
        cursor = conn.execute(f"SELECT {COLUMNS} FROM telegram_deliveries WHERE {bot} = %s AND state IN (%s, %s) "
                              "ORDER BY id DESC LIMIT %s", [bot_id, UNCERTAIN, FAILED, ATTENTION_SHOWN])
        names = [column.name for column in cursor.description]
        attention = [delivery_of(dict(zip(names, row, strict=True))) for row in reversed(cursor.fetchall())]
        polled = conn.execute("SELECT host, pid, since FROM telegram_pollers WHERE bot_id = %s", [bot_id]).fetchone()
    poller = None if polled is None else {"host": polled[0], "pid": int(polled[1]), "since": polled[2].isoformat(),
                                          "live": shared.lease_held(poller_lease(bot_id))}
    return FleetDeliveryRecords(True, counts, attention, poller)
