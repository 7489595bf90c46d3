"""The `shared_database` service (postgresql_contract.SharedDatabase): the session backend's
pool lent to other plugins for their own tables, their schema steps run by the same
migration runner, fleet-wide named leases, and read-only reads (`pending_steps`, `read_only`,
`read_only_qmark`) on connections of their own for `doctor` and `status`, which must not migrate anything.

Its transactions commit synchronously whatever the session default is, so a plugin may
acknowledge once the block returned. A connection the server dropped surfaces as the core's
SessionStoreError, password scrubbed; the pool replaces it for the next caller. A plugin's
store may instead take `?` SQL through a QmarkEngine (qmark_engine), one SQL text for its
SQLite file and this database.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .lease_health import HELD
from .pg_backend import PgBackend, connect, unavailable
from .pg_owner_lease import KEEPALIVE
from .pg_schema import NewerDatabaseError, Step, migrate, read_schema_status, refusal
from .qmark_engine import QmarkEngine, ReadOnlyQmarkEngine


class SharedDatabase:
    def __init__(self, backend: PgBackend) -> None:
        self.backend = backend
        self.shown = backend.url.shown
        self._schemas: set[str] = set()  # owners whose steps this process already ensured
        self._lock = threading.Lock()

    def ensure_schema(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
        _check_names(owner, steps)
        with self._lock:
            if owner in self._schemas:
                return []
            self.backend.pool  # the core's schema first (and the reachability check)  # noqa: B018
            import psycopg

            try:
                with connect(self.backend.url, self.backend.connect_timeout_s) as conn:
                    applied = migrate(conn, self.shown, [Step(name, tuple(sql)) for name, sql in steps], owner)
            except psycopg.Error as exc:
                raise unavailable(self.backend.kit, self.backend.url, exc) from None
            except NewerDatabaseError as exc:
                raise self.backend.kit.SessionStoreError(self.backend.url.scrub(str(exc))) from None
            self._schemas.add(owner)
            return applied

    def pending_steps(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
        import psycopg

        _check_names(owner, steps)
        known = [Step(name, tuple(sql)) for name, sql in steps]
        try:
            with connect(self.backend.url, self.backend.connect_timeout_s) as conn:
                status = read_schema_status(conn)
        except psycopg.Error as exc:
            raise unavailable(self.backend.kit, self.backend.url, exc) from None
        refused = refusal(status, self.shown, known, owner)
        if refused is not None:
            raise self.backend.kit.SessionStoreError(self.backend.url.scrub(str(refused)))
        return status.pending(known)

    @contextmanager
    def read_only(self) -> Iterator[Any]:
        import psycopg

        try:
            with connect(self.backend.url, self.backend.connect_timeout_s) as conn, conn.transaction():
                conn.execute("SET TRANSACTION READ ONLY")
                yield conn
        except psycopg.Error as exc:
            raise unavailable(self.backend.kit, self.backend.url, exc) from None

    @contextmanager
    def read_only_qmark(self, owner: str, refuse: Callable[[str], Exception]) -> Iterator[ReadOnlyQmarkEngine]:
        from atomic_agent.api import SessionStoreError

        try:
            with self.read_only() as conn:
                engine = ReadOnlyQmarkEngine(self, conn, owner, refuse)
                try:
                    yield engine
                finally:
                    engine.close()
        except SessionStoreError as exc:
            raise refuse(str(exc)) from None

    @contextmanager
    def connection(self) -> Iterator[Any]:
        import psycopg

        try:
            with self.backend.pool.connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise unavailable(self.backend.kit, self.backend.url, exc) from None

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        import psycopg

        try:
            with self.backend.pool.connection() as conn, conn.transaction():
                conn.execute("SET LOCAL synchronous_commit = on")
                yield conn
        except psycopg.Error as exc:
            raise unavailable(self.backend.kit, self.backend.url, exc) from None

    def lease(self, name: str) -> PgNamedLease | None:
        lease = PgNamedLease(self.backend, name)
        return lease if lease.held() else None

    def lease_held(self, name: str) -> bool:
        with self.read_only() as conn:
            row = conn.execute("select " + HELD.format(key="%s"), ["lease:" + name]).fetchone()
        return bool(row and row[0])

    def qmark_engine(self, owner: str, steps: Sequence[tuple[str, Sequence[str]]],
                     refuse: Callable[[str], Exception]) -> QmarkEngine:
        from atomic_agent.api import SessionStoreError

        try:
            self.ensure_schema(owner, steps)
        except SessionStoreError as exc:
            raise refuse(f"{owner}: its records cannot be kept in PostgreSQL: {exc}") from None
        return QmarkEngine(self, owner, refuse)


def _check_names(owner: str, steps: Sequence[tuple[str, Sequence[str]]]) -> None:
    if not owner or "." in owner:
        raise ValueError(f"a schema owner is a plugin name without dots, not {owner!r}")
    stray = [name for name, _ in steps if not name.startswith(owner + ".")]
    if stray:
        raise ValueError(f"{owner}'s schema steps must be named {owner}.<step>: {', '.join(stray)}")


class PgNamedLease:
    """A session-level advisory lock on `lease:<name>`, on a connection of its own."""

    def __init__(self, backend: PgBackend, name: str) -> None:
        self.backend = backend
        self.name = name
        self._conn: Any = None
        self._released = False
        self._lock = threading.Lock()

    def held(self) -> bool:
        import psycopg

        with self._lock:
            if self._released:
                return False
            try:
                if self._conn is not None and not self._conn.broken and not self._conn.closed:
                    self._conn.execute("select 1")
                    return True
            except psycopg.Error:
                pass
            self._drop()
            try:
                conn = psycopg.connect(autocommit=True, **{**self.backend.url.connect_kwargs(
                    self.backend.connect_timeout_s), **KEEPALIVE})
                row = conn.execute("select pg_try_advisory_lock(hashtextextended(%s, 0))",
                                   ["lease:" + self.name]).fetchone()
                got = bool(row and row[0])
            except psycopg.Error as exc:
                raise unavailable(self.backend.kit, self.backend.url, exc) from None
            if not got:
                conn.close()
                return False
            self._conn = conn
            return True

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:
                pass

    def release(self) -> None:
        with self._lock:
            self._released = True
            if self._conn is not None and not self._conn.broken:
                try:
                    self._conn.execute("select pg_advisory_unlock_all()")
                except Exception:
                    pass
            self._drop()
