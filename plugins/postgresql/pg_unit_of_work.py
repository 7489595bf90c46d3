"""One store object's connection to PostgreSQL and its transactions (session_database's unit
of work): `write()` opens a transaction or joins the one open on this object; leaving the
outermost block commits, any exception (BaseException included) rolls all of it back.

The connection is checked out of the backend's pool for the store object's life, so every
read made through the object while a transaction is open belongs to that transaction. A
connection the server dropped is replaced: a read outside a transaction is retried once on
the new one; inside a transaction nothing is retried (the server already rolled it back) and
the caller gets SessionStoreError saying nothing of it was written. A COMMIT whose answer
was lost is the one case that cannot be known; its message says so (the caller retries
with its idempotency key, which finds the turn if it did commit).

Group commit: a write that acknowledges nothing (`durable=False`, or any write inside the
core's `deferred_sync()`) commits with `synchronous_commit = off` — atomic and visible at
once, its WAL not yet flushed. Its caller awaits `wait_durable()` before acknowledging, which
commits one tiny synchronous transaction on another connection: its WAL flush covers every
commit made before it, so turns committing meanwhile share one flush. PostgreSQL replays WAL
as a prefix, so a crash loses relaxed commits only together with every later one, and the
next synchronous commit that writes makes all earlier ones durable.

Every message names the database without its password (`DatabaseUrl.scrub`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

LOCK_TIMEOUT = "30s"  # a row or advisory lock held longer than this is reported as locked


class PgUnitOfWork:
    def __init__(self, pool: Any, url: Any, kit: Any) -> None:
        self.pool = pool
        self.url = url
        self.kit = kit
        self._conn: Any = None
        self._depth = 0  # nesting of write()/reading() blocks on this object
        self._closed = False
        self._relaxed = 0  # relaxed commits made through this object
        self._flushed = 0  # of those, how many a flush is known to cover

    # -- the connection ---------------------------------------------------------------------
    @property
    def conn(self) -> Any:
        if self._closed:
            raise self.kit.SessionStoreError(f"the session store on {self.url.shown} was closed")
        if self._conn is not None and self._conn.broken and self._depth == 0:
            self._release()
        if self._conn is None:
            self._conn = self._checkout()
        return self._conn

    def _checkout(self) -> Any:
        from psycopg_pool import PoolTimeout

        try:
            conn = self.pool.getconn()
        except PoolTimeout as exc:
            raise self.kit.SessionStoreError(
                f"no connection to the PostgreSQL database {self.url.shown} could be had ({self.url.scrub(str(exc))}); "
                "nothing was written. Check that the server is up and reachable from this host "
                "(`atomic-agent doctor` checks it), then retry") from None
        return conn

    def _release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                self.pool.putconn(conn)  # a broken connection is discarded by the pool
            except Exception:  # the pool is closing: the connection goes with it
                conn.close()

    def close(self) -> None:
        if not self._closed:
            if self._conn is not None and not self._conn.broken and self._depth:
                self._conn.execute("ROLLBACK")
            self._release()
            self._closed = True

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -- statements -------------------------------------------------------------------------
    def execute(self, sql: Any, params: Sequence[Any] = ()) -> Any:
        """Run one statement (joining the open transaction, if any); a dropped connection is
        replaced and the statement retried once when no transaction was open."""
        import psycopg

        try:
            return self.conn.execute(sql, list(params))
        except psycopg.OperationalError as exc:
            if self._depth == 0 and self._conn is not None and self._conn.broken:
                self._release()
                try:
                    return self.conn.execute(sql, list(params))
                except psycopg.OperationalError as again:
                    raise self.explain(again) from None
            raise self.explain(exc) from None

    def explain(self, exc: BaseException) -> Exception:
        """The typed, password-free error for a driver failure."""
        import psycopg
        from psycopg import errors

        text = self.url.scrub(str(exc).strip())
        if isinstance(exc, (errors.LockNotAvailable, errors.QueryCanceled)):
            return self.kit.SessionStoreLockedError(
                f"the PostgreSQL database {self.url.shown} kept a lock past {LOCK_TIMEOUT} ({text}); nothing was "
                "written and everything accepted earlier is intact. Retry")
        if isinstance(exc, errors.SerializationFailure | errors.DeadlockDetected):
            return self.kit.SessionStoreLockedError(
                f"the PostgreSQL database {self.url.shown} aborted this transaction to resolve a conflict with another "
                f"process ({text}); nothing was written. Retry")
        if isinstance(exc, psycopg.OperationalError):
            return self.kit.SessionStoreError(
                f"the connection to the PostgreSQL database {self.url.shown} failed ({text}); nothing of the "
                "transaction in progress was written and everything committed earlier is intact. Check that the "
                "server is up (`atomic-agent doctor`), then retry")
        return self.kit.SessionStoreError(f"the PostgreSQL database {self.url.shown} refused a statement ({text})")

    # -- transactions -----------------------------------------------------------------------
    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[Any]:
        """A transaction (or the open one, joined); yields the connection as the handle. The
        outermost block decides durability: with `durable=False` or inside `deferred_sync()`
        it commits relaxed and owes a flush (see the module docstring)."""
        import psycopg

        if self._depth:
            self._depth += 1
            try:
                yield self._conn
            finally:
                self._depth -= 1
            return
        relax = not durable or bool(self.kit.sync_is_deferred())
        conn = self._begin("BEGIN")
        self._depth = 1
        try:
            if relax:
                conn.execute("SET LOCAL synchronous_commit = off")
            yield conn
        except BaseException as exc:
            self._depth = 0
            self._rollback(conn)
            if isinstance(exc, psycopg.Error):
                raise self.explain(exc) from exc
            raise
        self._depth = 0
        try:
            conn.execute("COMMIT")
            if relax:  # (a later synchronous commit would cover it too, but only one that wrote
                self._relaxed += 1  # something: `flush` makes sure rather than guess)
        except psycopg.OperationalError as exc:
            self._release()
            raise self.kit.SessionStoreError(
                f"the connection to the PostgreSQL database {self.url.shown} failed while committing "
                f"({self.url.scrub(str(exc).strip())}): the transaction may or may not have been committed. "
                "Nothing was acknowledged; retry with the same idempotency key to find out") from None
        except psycopg.Error as exc:
            self._rollback(conn)
            raise self.explain(exc) from None

    def _begin(self, begin: str) -> Any:
        """Open a transaction; a connection found dropped here (nothing begun yet) is replaced
        and the BEGIN tried once more on a fresh one."""
        import psycopg

        for attempt in (1, 2):
            conn = self.conn
            try:
                conn.execute(begin)
                conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
                return conn
            except psycopg.OperationalError as exc:
                self._release()
                if attempt == 2 or not conn.broken:
                    raise self.explain(exc) from None
        raise AssertionError("unreachable")

    @property
    def owes_flush(self) -> bool:
        return self._flushed < self._relaxed

    def flush(self) -> None:
        """Make every commit made through this object so far durable: one synchronous commit
        of a transaction with an id (so it writes a commit record) on a pool connection."""
        import psycopg

        target = self._relaxed
        if self._flushed >= target:
            return
        try:
            with self.pool.connection() as conn:
                conn.execute("BEGIN")
                conn.execute("SELECT pg_current_xact_id()")
                conn.execute("COMMIT")
        except psycopg.Error as exc:
            raise self.explain(exc) from None
        self._flushed = max(self._flushed, target)

    def _rollback(self, conn: Any) -> None:
        if conn.broken or conn.closed:
            self._release()
            return
        try:
            conn.execute("ROLLBACK")
        except Exception:
            self._release()

    @contextmanager
    def reading(self) -> Iterator[bool]:
        """One snapshot for the statements inside (REPEATABLE READ, read only); yields True when
        it is its own (False: it joined an open transaction, whose reads may yet roll back)."""
        if self._depth:
            yield False
            return
        conn = self._begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self._depth = 1
        try:
            yield True
        finally:
            self._depth = 0
            self._rollback(conn)  # read-only: nothing to keep
