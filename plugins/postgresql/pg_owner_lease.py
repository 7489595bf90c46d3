"""Which process owns which turns, fleet-wide: each runtime holds a session-level advisory
lock named for its owner on a connection of its own, for as long as it lives.

This is the shared-database form of the embedded store's lock file (turns/turn_owner): the
server drops the lock when the owner's connection ends — the process exits or is killed,
or its host goes silent and TCP keepalives give up on it — so every process of the fleet,
on any host, can tell a dead owner's turns (adopt or interrupt them) from a live one's (wait).
Liveness is decided by the database alone, never by comparing host clocks.

A lease whose own connection was lost (a server restart drops every lease of the fleet at
once) is taken again by `renew`, which every serving host's takeover tick calls each pass,
and on this process's next check of another owner. A restart is what this process sees too:
its own lease's connection was lost. So for `grace_s` after this process had to take its own
lease again (its monotonic clock: no host clocks are compared) a missing lock does not make
an owner dead — long enough for every live host to renew, so the hosts do not fence out each
other's running turns. Otherwise (a SIGKILL, a lost host: this process kept its connection) a
missing lock is a dead owner at once. A process whose lease stays missing past the grace is
dead, and its writers learn it as StaleWriterError.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from typing import Any

from .database_url import DatabaseUrl

KEEPALIVE: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}
GRACE_S = 3.0  # after this process lost its own lease (a server restart), how long others get to renew theirs


OWNER_KEY_PREFIX = "owner:"  # the lock key is hashtextextended(prefix || owner, 0)


def owner_key(owner: str) -> str:
    return OWNER_KEY_PREFIX + owner


class PgOwnerLease:
    def __init__(self, url: DatabaseUrl, kit: Any, connect_timeout_s: int = 10, owner: str | None = None,
                 grace_s: float = GRACE_S) -> None:
        self.url = url
        self.grace_s = grace_s
        self._retaken_at: float | None = None  # when this process last had to take its lost lease again
        self.kit = kit
        self.connect_timeout_s = connect_timeout_s
        self.owner = owner or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._lock = threading.Lock()
        self._conn: Any = None
        self._released = False
        self._took_once = False
        with self._lock:
            self._take()

    def _take(self) -> Any:
        import psycopg

        if self._conn is not None and not self._conn.broken and not self._conn.closed:
            return self._conn
        lost = self._took_once  # held before: this is a retake after its connection was lost
        try:
            options: dict[str, Any] = {**self.url.connect_kwargs(self.connect_timeout_s), **KEEPALIVE}
            conn = psycopg.connect(autocommit=True, **options)
            conn.execute("select pg_advisory_lock(hashtextextended(%s, 0))", [owner_key(self.owner)])
        except psycopg.Error as exc:
            raise self.kit.SessionStoreError(
                f"the owner lease on the PostgreSQL database {self.url.shown} could not be taken "
                f"({self.url.scrub(str(exc))}); nothing was admitted. Check the server (`atomic-agent doctor`)") from None
        self._conn = conn
        if lost:
            self._retaken_at = time.monotonic()
        self._took_once = True
        return conn

    def renew(self) -> None:
        """Take the lease again if its connection was lost (a heartbeat: the server notices
        nothing until the connection is used). SessionStoreError while the database is down."""
        import psycopg

        with self._lock:
            if self._released:
                return
            conn = self._take()
            try:
                conn.execute("select 1")
            except psycopg.OperationalError:
                self._take()  # the broken connection is replaced (and the loss remembered)

    def is_alive(self, owner: str | None) -> bool:
        """True for this runtime and for any owner whose lock some connection holds now."""
        if owner is None:
            return False
        if owner == self.owner:
            return not self._released
        import psycopg

        with self._lock:
            for attempt in (1, 2):
                conn = self._take()
                try:
                    row = conn.execute("select pg_try_advisory_lock(hashtextextended(%s, 0))",
                                       [owner_key(owner)]).fetchone()
                    if not row[0]:
                        return True
                    # nobody held it: let go of it again at once. Dead, unless this process lost its
                    # own lease moments ago (a server restart): then the owner may not have renewed yet
                    conn.execute("select pg_advisory_unlock(hashtextextended(%s, 0))", [owner_key(owner)])
                    return self._retaken_at is not None and time.monotonic() - self._retaken_at < self.grace_s
                except psycopg.OperationalError:
                    if attempt == 2:
                        raise
                    # retaken (with this owner's own lock) on the next pass; the loss is remembered
        return True  # not reached: the second attempt returns or raises

    def release(self) -> None:
        with self._lock:
            self._released = True
            conn, self._conn = self._conn, None
            if conn is not None:
                if not conn.broken:
                    try:  # at once: the server would drop it with the session, but only once that ends
                        conn.execute("select pg_advisory_unlock_all()")
                    except Exception:
                        pass
                conn.close()
