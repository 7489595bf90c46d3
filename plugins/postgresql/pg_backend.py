"""The PostgreSQL session backend: a connection pool on one database, checked and migrated
when it is built, and the factories of the three repositories (the shape of the core's
SessionBackend record: `name`, `open_store`, `ledger`, `steers`).

Building it is the admission gate: a database that cannot be reached, refuses the login or
was migrated by a newer build raises StorageUnavailableError here, before the runtime opens
a store, so no message is acknowledged while the state has nowhere durable to go.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .database_url import DatabaseUrl
from .pg_schema import migrate
from .pg_session_store import PgSessionStore
from .pg_steer_queue import PgSteerQueue
from .pg_turn_ledger import PgTurnLedger
from .pg_unit_of_work import PgUnitOfWork


def unavailable(kit: Any, url: DatabaseUrl, exc: BaseException) -> Exception:
    """The refusal for a database this process cannot use, password scrubbed."""
    return kit.SessionStoreError(
        f"the PostgreSQL database {url.shown} (storage.url) cannot be used: {url.scrub(str(exc).strip())}. Nothing "
        "was admitted or written. Check that the server is running and reachable from this host, and that the "
        "password in <state>/.env (ATOMIC_AGENT_STORAGE_PASSWORD) is right; `atomic-agent doctor` checks the "
        "connection; an empty storage.url goes back to the embedded SQLite state")


def connect(url: DatabaseUrl, connect_timeout_s: int) -> Any:
    import psycopg

    return psycopg.connect(autocommit=True, **url.connect_kwargs(connect_timeout_s))  # type: ignore[arg-type]


class PgBackend:
    name = "postgresql"

    def __init__(self, url: DatabaseUrl, kit: Any, *, pool_size: int = 8, connect_timeout_s: int = 10) -> None:
        import psycopg
        from psycopg_pool import ConnectionPool

        self.url = url
        self.kit = kit
        try:
            with connect(url, connect_timeout_s) as conn:
                self.applied = migrate(conn, url.shown)
        except psycopg.Error as exc:
            raise unavailable(kit, url, exc) from None
        except Exception as exc:  # NewerDatabaseError: its message already says what to do
            raise kit.SessionStoreError(url.scrub(str(exc))) from None
        self.pool = ConnectionPool(kwargs={"autocommit": True, **url.connect_kwargs(connect_timeout_s)},
                                   min_size=1, max_size=pool_size, open=True, timeout=connect_timeout_s,
                                   check=ConnectionPool.check_connection, name="atomic-agent-sessions")

    def open_store(self, state_dir: Path | None = None) -> PgSessionStore:
        """A new store object (its own connection and transactions); `state_dir` is not used:
        the state lives in the database."""
        return PgSessionStore(PgUnitOfWork(self.pool, self.url, self.kit))

    def ledger(self, store: PgSessionStore, owner: str) -> PgTurnLedger:
        return PgTurnLedger(store, owner)

    def steers(self, store: PgSessionStore, owner: str) -> PgSteerQueue:
        return PgSteerQueue(store, owner)

    def close(self) -> None:
        self.pool.close()
