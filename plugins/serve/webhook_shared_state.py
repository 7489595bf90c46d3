"""What `storage migrate` copies of the webhook deliveries (postgresql_contract's
SHARED_STATE_SERVICE): serve/webhooks.sqlite's seen marks and Idempotency-Keys, kept as
webhook_seen and webhook_idempotency (steps serve.mNNN_*) in the fleet's database.

A key's age is epoch seconds in the file and a timestamptz in the database: both sides are
read (and hashed) as whole microseconds, the precision the database keeps."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from .pg_webhook_deliveries import SCHEMA_OWNER, STEPS
from .webhook_deliveries import DB_DIR, DB_FILE

_CREATED_AT = ("(extract(epoch from created_at) * 1000000)::bigint", "to_timestamp(%s::float8 / 1000000)",
               "cast(round(created_at * 1000000) as integer)", "? / 1000000.0")


@attrs.frozen
class WebhookState:
    owner: str = SCHEMA_OWNER
    schema_steps: Sequence[tuple[str, Sequence[str]]] = tuple(STEPS)
    path: str = f"{DB_DIR}/{DB_FILE}"
    tables: Sequence[tuple[str, str, Sequence[str], str]] = (
        ("webhook_seen", "seen", ("endpoint", "mark"), ""),
        ("webhook_idempotency", "idempotency", ("endpoint", "key"), ""),
    )
    forms: Mapping[str, tuple[str, str, str, str]] = attrs.field(
        factory=lambda: {"webhook_idempotency.created_at": _CREATED_AT})

    @contextlib.contextmanager
    def open_sqlite(self, state_dir: Path) -> Iterator[Any]:
        from .webhook_deliveries import WebhookDeliveries

        deliveries = WebhookDeliveries(state_dir)  # migrated to this build's schema
        try:
            yield deliveries.conn
        finally:
            deliveries.close()
