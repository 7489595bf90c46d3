"""One bot's delivery records as `telegram status`, `atomic-agent status` and `doctor` read
them, writing nothing: the store's own read methods (DeliveryStore.counts, in_state) over an
engine that cannot write.

On one host: telegram.sqlite opened read-only (DeliveryFileLook), never created or migrated.
No file means no deliveries yet; an older build's file is not read (its tables may have
their old names) but said to be upgraded by the next `telegram` start; a newer build's is
refused (TelegramStoreNewerError). On a fleet host: the shared database's read-only engine
(one READ ONLY transaction: no schema step applied, no lease taken; whether the poller's
lease is held is read from pg_locks). A database no host ran the channel on has no Telegram
tables yet; one an older build migrated is not read until a host of this build starts the
channel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.postgresql.postgresql_contract import SharedDatabase

from .delivery_database import DeliveryFileLook, newer_refusal
from .delivery_schema import MIGRATIONS, PG_STEPS
from .delivery_store import FAILED, STATES, UNCERTAIN, Delivery, DeliveryStore, TelegramStoreError
from .fleet_poller_lease import last_poller, poller_lease

ATTENTION_SHOWN = 20  # the newest uncertain and failed deliveries listed
NO_DELIVERIES = "no deliveries yet"


@attrs.frozen
class DeliveryLook:
    ran: bool  # the records exist (telegram.sqlite, or the fleet's Telegram tables)
    older: str | None  # they are an older build's, not read: what says so and what upgrades them
    counts: dict[str, int]  # the bot's deliveries by state
    attention: list[Delivery]  # its newest uncertain and failed ones, oldest first
    poller: dict[str, Any] | None = None  # fleet: who took the poller lease last {host, pid, since, live}

    @property
    def unread(self) -> str | None:
        """Why the deliveries were not read, or None when they were."""
        if not self.ran:
            return NO_DELIVERIES
        return self.older


def _unread(ran: bool, older: str | None = None) -> DeliveryLook:
    return DeliveryLook(ran, older, dict.fromkeys(STATES, 0), [])


def _read(store: DeliveryStore) -> tuple[dict[str, int], list[Delivery]]:
    return store.counts(), store.in_state(UNCERTAIN, FAILED)[-ATTENTION_SHOWN:]


def look_at_state_dir(path: Path, bot_id: int) -> DeliveryLook:
    """`bot_id`'s deliveries in telegram.sqlite at `path`; TelegramStoreNewerError for a newer
    build's file, sqlite3.Error for a damaged one."""
    if not path.exists():
        return _unread(False)
    database = DeliveryFileLook(path)
    try:
        newer = database.schema.newer_than(MIGRATIONS)
        if newer is not None:
            raise newer_refusal(path, newer)
        if database.older():
            return _unread(True, f"{path} is an older build's (schema version {database.schema.version}; this "
                                 f"build's is {len(MIGRATIONS)}): its deliveries are not read now, and the next "
                                 "`atomic-agent telegram` start (run, serve, sidecar) upgrades it")
        return DeliveryLook(True, None, *_read(DeliveryStore.looking(database, bot_id)))
    finally:
        database.close()


def look_at_fleet(shared: SharedDatabase, bot_id: int) -> DeliveryLook:
    """`bot_id`'s deliveries and poller on the fleet's database; SessionStoreError or
    TelegramStoreError when it cannot be read or a newer build migrated Telegram's tables."""
    pending = shared.pending_steps("telegram", PG_STEPS)
    if PG_STEPS[0][0] in pending:
        return _unread(False)
    with shared.read_only_qmark("telegram", TelegramStoreError) as engine:
        store = DeliveryStore.looking(engine, bot_id)
        poller = last_poller(store, bot_id)
        counts, attention = _read(store) if not pending else (dict.fromkeys(STATES, 0), [])
    if poller is not None:
        poller["live"] = shared.lease_held(poller_lease(bot_id))
    older = None if not pending else (
        f"Telegram's tables in {shared.shown} are an older build's ({', '.join(pending)} not applied): their "
        "deliveries are not read now, and the next host to start the Telegram channel upgrades them")
    return DeliveryLook(True, older, counts, attention, poller)
