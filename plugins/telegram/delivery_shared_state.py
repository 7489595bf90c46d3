"""What `storage migrate` copies of Telegram's records (postgresql_contract's
SHARED_STATE_SERVICE): telegram.sqlite's deliveries, handled updates, approval prompts and
offsets, kept as telegram_* (steps telegram.mNNN_*) in the fleet's database. Who polls now
(telegram_pollers) is a live lease's note, not state to move. `formatted` is 0/1 in the file
and a boolean in the database: both are read as 0/1."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .delivery_store import DB_FILE
from .pg_delivery_schema import STEPS

_FORMATTED = ("formatted::int", "%s::int::boolean", "formatted", "?")


@attrs.frozen
class TelegramState:
    owner: str = "telegram"
    schema_steps: Sequence[tuple[str, Sequence[str]]] = STEPS
    path: str = DB_FILE
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (
        ("telegram_deliveries", "deliveries", ("id",), "id"),
        ("telegram_handled_updates", "handled_updates", ("update_id",), ""),
        ("telegram_approval_requests", "approval_requests", ("token",), ""),
        ("telegram_offsets", "offsets", ("bot_id",), ""),
    )
    forms: Mapping[str, tuple[str, str, str, str]] = attrs.field(
        factory=lambda: {"telegram_deliveries.formatted": _FORMATTED})
    # doctor's lease health (postgresql_contract.FleetLeaseHolders): the bot's poller lease
    # (fleet_poller_lease), held or not; polling is no work a dead holder keeps from the fleet
    leases: Sequence[tuple[str, str]] = (
        ("Telegram poller", "SELECT 'telegram:' || bot_id, 0 FROM telegram_pollers"),
    )

    @contextlib.contextmanager
    def open_sqlite(self, state_dir: Path) -> Iterator[Any]:
        from .delivery_store import DeliveryStore

        store = DeliveryStore(state_dir)  # migrated to this build's schema
        try:
            yield store.conn
        finally:
            store.close()
