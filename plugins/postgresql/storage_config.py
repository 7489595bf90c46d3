"""The `storage` config block: where the shared state lives. Empty `url` (the default) keeps
the embedded SQLite files in the state directory; `postgresql://user@host:port/db` moves
sessions, transcripts, the turn ledger and steers to that PostgreSQL database."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field

PASSWORD_ENV = "ATOMIC_AGENT_STORAGE_PASSWORD"  # in <state>/.env: the URL in config.json carries no secret


@attrs.frozen
class StorageConfig:
    url: str = value_field("", env="ATOMIC_AGENT_STORAGE_URL")
    pool_size: int = int_field(8, 1, 200)
    connect_timeout_s: int = int_field(10, 1, 300)
    # how often a serving host looks for a dead host's queued and running work (0: never)
    takeover_interval_s: int = int_field(2, 0, 3600)
