"""The PostgreSQL session backend: a connection pool on one database, checked and migrated
when it is built, and the factories of the three repositories (the shape of the core's
SessionBackend record: `name`, `open_store`, `ledger`, `steers`, `lease`, `approvals`,
`approval_audit`).

Opening the first store is the admission gate: it connects, applies the schema steps (under
the advisory lock) and opens the pool. A database that cannot be reached, refuses the login
or was migrated by a newer build raises SessionStoreError there, before anything is
admitted, so no message is acknowledged while the state has nowhere durable to go; the next
attempt tries again, so a process started before its database recovers by itself.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .database_url import DatabaseUrl
from .pg_owner_lease import GRACE_S, PgOwnerLease
from .pg_schema import migrate
from .pg_session_store import PgSessionStore
from .pg_steer_queue import PgSteerQueue
from .pg_turn_ledger import PgTurnLedger
from .pg_unit_of_work import PgUnitOfWork

if TYPE_CHECKING:
    from .approval_notices import ApprovalNotices
    from .pg_approval_audit import PgApprovalAudit
    from .pg_approval_records import PgApprovalRecords


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

    def __init__(self, url: DatabaseUrl, kit: Any, *, pool_size: int = 8, connect_timeout_s: int = 10,
                 state_dir: Path | None = None, lease_grace_s: float = GRACE_S) -> None:
        self.url = url
        self.state_dir = state_dir  # whose config fingerprint is recorded (fleet_config); None: nothing recorded
        self.config_disagreement: str | None = None  # set when another host's config differs (fleet_config)
        self.kit = kit
        self.pool_size = pool_size
        self.lease_grace_s = lease_grace_s  # how long an owner's lock stays missing before it is dead
        self.connect_timeout_s = connect_timeout_s
        self.applied: list[str] = []  # schema steps this process applied
        self._pool: Any = None
        self._opening = threading.Lock()
        self._leases: list[PgOwnerLease] = []  # the owner leases this process took (renew_leases)
        self._notices: ApprovalNotices | None = None  # approval waiters' wake-ups (one LISTEN connection)

    @property
    def pool(self) -> Any:
        """The connection pool, opened (after the schema check and migration) on first use."""
        with self._opening:
            if self._pool is None:
                self._pool = self._open_pool()
            return self._pool

    def _open_pool(self) -> Any:
        import psycopg
        from psycopg_pool import ConnectionPool

        from .pg_schema import NewerDatabaseError

        try:
            with connect(self.url, self.connect_timeout_s) as conn:
                self.applied = migrate(conn, self.url.shown)
                if self.state_dir is not None:
                    self._compare_configs(conn, self.state_dir)
        except psycopg.Error as exc:
            raise unavailable(self.kit, self.url, exc) from None
        except NewerDatabaseError as exc:  # its message already says what to do
            raise self.kit.SessionStoreError(self.url.scrub(str(exc))) from None
        return ConnectionPool(kwargs={"autocommit": True, **self.url.connect_kwargs(self.connect_timeout_s)},
                              min_size=1, max_size=self.pool_size, open=True, timeout=self.connect_timeout_s,
                              check=ConnectionPool.check_connection, name="atomic-agent-sessions")

    def _compare_configs(self, conn: Any, state_dir: Path) -> None:
        import sys

        from .fleet_config import config_fingerprint, disagreement, member_of, record_and_compare

        fingerprint = config_fingerprint(state_dir)
        others = record_and_compare(conn, member_of(state_dir), fingerprint)
        if others:
            self.config_disagreement = disagreement(self.url.shown, fingerprint, others)
            print(f"atomic-agent: warning: {self.config_disagreement}", file=sys.stderr, flush=True)

    def open_store(self, state_dir: Path | None = None) -> PgSessionStore:
        """A new store object (its own connection and transactions); `state_dir` is not used:
        the state lives in the database. SessionStoreError when the database cannot be used."""
        return PgSessionStore(PgUnitOfWork(self.pool, self.url, self.kit))

    def ledger(self, store: PgSessionStore, owner: str) -> PgTurnLedger:
        return PgTurnLedger(store, owner)

    def steers(self, store: PgSessionStore, owner: str) -> PgSteerQueue:
        return PgSteerQueue(store, owner)

    def lease(self, state_dir: Path | None = None) -> PgOwnerLease:
        """This process's owner lease, visible to every host (an advisory lock; see pg_owner_lease)."""
        lease = PgOwnerLease(self.url, self.kit, self.connect_timeout_s, grace_s=self.lease_grace_s)
        self._leases.append(lease)
        return lease

    def renew_leases(self) -> None:
        """Take again every lease of this process whose connection was lost (a server restart)."""
        for lease in self._leases:
            lease.renew()

    def approvals(self, state_dir: Path | None = None) -> PgApprovalRecords:
        """The fleet's approval and question records (every host answers the same ones); the
        pool opens on first use, so an unusable database fails the first call, not this one."""
        from .approval_notices import ApprovalNotices
        from .pg_approval_records import PgApprovalRecords
        from .shared_database import SharedDatabase  # it builds on this module

        with self._opening:
            if self._notices is None:
                self._notices = ApprovalNotices(self.url, self.connect_timeout_s)
        return PgApprovalRecords(SharedDatabase(self), self.kit, self._notices)

    def approval_audit(self, state_dir: Path | None = None) -> PgApprovalAudit:
        """The fleet's approval audit (append-only in the database), in place of the state dir's file."""
        from .pg_approval_audit import PgApprovalAudit
        from .shared_database import SharedDatabase

        return PgApprovalAudit(SharedDatabase(self), self.kit)

    def close(self) -> None:
        with self._opening:
            if self._notices is not None:
                self._notices.close()
            if self._pool is not None:
                self._pool.close()
