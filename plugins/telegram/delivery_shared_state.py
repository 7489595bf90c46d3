"""What `storage migrate` copies of Telegram's records (postgresql_contract's
SHARED_STATE_SERVICE): telegram.sqlite's deliveries (with each attempt's sender and the bot
that owes it), handled updates (per bot), approval prompts and offsets, under the same telegram_* names in the
fleet's database (steps telegram.mNNN_*). Who polls now (telegram_pollers) is a live lease's
note, not state to move. `formatted` is 0/1 in the file and a boolean in the database: both
are read as 0/1."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .delivery_database import DB_FILE
from .delivery_schema import PG_STEPS

_FORMATTED = ("formatted::int", "%s::int::boolean", "formatted", "?")


@attrs.frozen
class TelegramState:
    owner: str = "telegram"
    schema_steps: Sequence[tuple[str, Sequence[str]]] = PG_STEPS
    path: str = DB_FILE
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (
        ("telegram_deliveries", "telegram_deliveries", ("id",), "id"),
        ("telegram_handled_updates", "telegram_handled_updates", ("bot_id", "update_id"), ""),
        ("telegram_approval_requests", "telegram_approval_requests", ("token",), ""),
        ("telegram_offsets", "telegram_offsets", ("bot_id",), ""),
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
        from .delivery_database import DeliveryDatabase, db_path

        database = DeliveryDatabase(db_path(state_dir))  # migrated to this build's schema
        try:
            yield database.conn
        finally:
            database.close()
