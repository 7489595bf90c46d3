"""One poller of a bot fleet-wide: the `telegram:<bot id>` lease of the fleet's PostgreSQL
database (`shared_database`) in place of the per-state-dir flock (instance_lock).

Telegram answers a second getUpdates of one bot with 409 Conflict, so exactly one process
of the fleet polls; the others stand by (`standby`) and try the lease again every
LEASE_RETRY_S. The database drops the lease when its holder's connection ends (the process
died), so a standby takes over within about one retry interval and starts from the shared
offset. Replies need no lease: any host sends through the Bot API, and the delivery
records (shared, compare-and-set) keep each chunk sent at most once.

Who took the lease last is noted in telegram_pollers (a table of the fleet's database only:
on one state dir the flock's file names the poller), for `telegram status`.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_agent.plugins.postgresql.postgresql_contract import NamedLease, SharedDatabase

from .bot_token import bot_id_of, read_token
from .delivery_store import DeliveryStore
from .instance_lock import LockHeldError

LEASE_RETRY_S = 2.0  # how often a standby tries the lease, and a poller checks it still holds it


def poller_lease(bot_id: int) -> str:
    """The fleet-wide lease of the bot's one poller (doctor's lease health names it the same
    way: delivery_shared_state)."""
    return f"telegram:{bot_id}"


def last_poller(store: DeliveryStore, bot_id: int) -> dict[str, Any] | None:
    """The process that took `bot_id`'s poller lease last ({host, pid, since}), or None (never polled)."""
    rows = store.database.query("SELECT host, pid, since FROM telegram_pollers WHERE bot_id = ?", [bot_id])
    return None if not rows else {"host": rows[0]["host"], "pid": int(rows[0]["pid"]),
                                  "since": rows[0]["since"].isoformat()}


class FleetPollerLease:
    standby = True  # another holder means: wait and retry, not fail

    def __init__(self, shared: SharedDatabase, store_of: Callable[[], DeliveryStore], state_dir: Path,
                 retry_s: float = LEASE_RETRY_S) -> None:
        self._shared = shared
        self._store_of = store_of
        self._state_dir = state_dir
        self.retry_s = retry_s
        self._lease: NamedLease | None = None
        self._bot_id = 0

    def acquire(self) -> None:
        """Take the bot's lease, or LockHeldError naming the process that took it last."""
        if self._lease is not None:
            return
        token = read_token(self._state_dir)
        if token is None:
            raise ValueError("no Telegram bot token: the poller lease is named after the bot")
        self._bot_id = bot_id_of(token)
        if not self._bot_id:
            raise ValueError("the Telegram bot token does not start with the bot's numeric id; set it again "
                             "(`atomic-agent telegram token --stdin`)")
        lease = self._shared.lease(poller_lease(self._bot_id))
        if lease is None:
            who = self.holder()
            named = f" (pid {who['pid']} on {who['host']})" if who else ""
            raise LockHeldError(f"standby: another host of the fleet polls this bot{named}; this one takes over "
                                "when it stops")
        self._lease = lease
        store = self._store_of()
        with store.database.write() as tx:  # the time is the database's
            tx.execute("INSERT INTO telegram_pollers (bot_id, host, pid, since) VALUES (?, ?, ?, now()) "
                       "ON CONFLICT (bot_id) DO UPDATE SET host = excluded.host, pid = excluded.pid, since = now()",
                       [self._bot_id, socket.gethostname(), os.getpid()])
        store.settle_interrupted()  # what a dead poller left mid-send is uncertain, never resent

    def still_held(self) -> bool:
        """Checks with the database: False once the lease is lost (this process must stop polling)."""
        if self._lease is None:
            return False
        if self._lease.held():
            return True
        self._lease = None
        return False

    @property
    def held(self) -> bool:
        return self._lease is not None

    def release(self) -> None:
        lease, self._lease = self._lease, None
        if lease is not None:
            lease.release()

    def holder(self) -> dict[str, Any] | None:
        """The process that took the lease last ({host, pid, since}), or None (never polled)."""
        if not self._bot_id:
            token = read_token(self._state_dir)
            if token is None:
                return None
            self._bot_id = bot_id_of(token)
        return last_poller(self._store_of(), self._bot_id)

    def holder_lives(self) -> bool:
        """Whether some process holds the bot's lease right now (pg_locks: looking takes nothing)."""
        return bool(self._bot_id) and self._shared.lease_held(poller_lease(self._bot_id))
