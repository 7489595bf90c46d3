"""The PostgreSQL database a chaos world's session state lives in, when the world runs on the
fleet backend instead of its state dir's sessions.sqlite (issue 37: the owner and crash
tiers with runtime processes on one PostgreSQL).

Every life boots with the `postgresql` plugin and `storage.url` naming this database, so its
runtime opens the same backend a serving host does; the password travels as a host's does,
in ATOMIC_AGENT_STORAGE_PASSWORD, never in config.json. A child owner process gets the
database through its environment (`to_environ` / `from_environ`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
from atomic_agent.plugins.postgresql.pg_backend import PgBackend
from atomic_agent.turns import session_backend_kit

PASSWORD_ENV = "ATOMIC_AGENT_STORAGE_PASSWORD"
WHERE_ENV = "CHAOS_POSTGRESQL"  # "<port> <database>" for a child owner process


@attrs.frozen
class ChaosDatabase:
    port: int
    name: str
    password: str = attrs.field(repr=False)

    @classmethod
    def of(cls, postgresql_database: Any) -> ChaosDatabase:
        """From the `postgresql_database` fixture's (server, name)."""
        server, name = postgresql_database
        return cls(server.port, name, server.password)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ChaosDatabase | None:
        where = environ.get(WHERE_ENV)
        if not where:
            return None
        port, name = where.split()
        return cls(int(port), name, environ[PASSWORD_ENV])

    def to_environ(self) -> dict[str, str]:
        return {WHERE_ENV: f"{self.port} {self.name}", PASSWORD_ENV: self.password}

    @property
    def url(self) -> str:
        return f"postgresql://agent@127.0.0.1:{self.port}/{self.name}"

    def environ(self) -> dict[str, str]:
        """What a life's boot and runtime see: the password, as a host's .env gives it."""
        return {PASSWORD_ENV: self.password}

    def write_config(self, state_dir: Path) -> None:
        """config.json naming the database (no takeover tick: the driver recovers, as in the SQLite tiers)."""
        state_dir.mkdir(parents=True, exist_ok=True)
        # every life of the world writes it, two owner processes at once: a rename, so a process
        # booting meanwhile reads the whole file, never one truncated by the other's write
        fresh = state_dir / f"config.json.{os.getpid()}.tmp"
        fresh.write_text(json.dumps({"version": CONFIG_VERSION, "storage": {"url": self.url, "takeoverIntervalS": 0}}))
        os.replace(fresh, state_dir / "config.json")

    def backend(self) -> PgBackend:
        """A backend of its own (pool and all) for the harness: creating sessions, reading the result."""
        return PgBackend(DatabaseUrl("agent", "127.0.0.1", self.port, self.name, self.password), session_backend_kit)
