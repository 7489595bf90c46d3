"""Who runs tasks on a fleet's PostgreSQL, and whether they still live: each runner holds the
fleet-wide lease `tasks.runner:<owner>` (the shared database's advisory lock on a connection
of its own) for as long as it runs. The server drops it when the process dies or its host goes
silent, so a run whose owner's lease can be taken is a dead owner's, whichever host looks,
with no host clock involved. The same `owner` / `is_alive` / `release` as the per-host
OwnerLease the SQLite tasks use."""

from __future__ import annotations

import os
import socket
import uuid
from typing import Any

from .task_errors import TaskStoreError

LEASE_PREFIX = "tasks.runner:"


class FleetRunnerLease:
    def __init__(self, shared: Any) -> None:
        self.shared = shared
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        lease = shared.lease(LEASE_PREFIX + self.owner)
        if lease is None:  # the name is new: only a broken database answers so
            raise TaskStoreError(f"could not take the task runner lease {self.owner} in {shared.shown}")
        self._lease = lease
        with shared.transaction() as conn:
            conn.execute("INSERT INTO task_runners (owner) VALUES (%s) ON CONFLICT DO NOTHING", [self.owner])

    def keep(self) -> bool:
        """Hold on to the lease (taken again after a lost connection, if nobody took it)."""
        return bool(self._lease.held())

    def is_alive(self, owner: str | None) -> bool:
        if not owner:
            return False
        if owner == self.owner:
            return True
        probe = self.shared.lease(LEASE_PREFIX + owner)
        if probe is None:  # its holder is connected: alive
            return True
        probe.release()
        return False

    def forget_dead(self) -> int:
        """Strike the runners whose lease is gone from the list `status` reads; how many."""
        with self.shared.connection() as conn:
            owners = [row[0] for row in conn.execute("SELECT owner FROM task_runners").fetchall()]
        dead = [owner for owner in owners if not self.is_alive(owner)]
        if dead:
            with self.shared.transaction() as conn:
                conn.execute("DELETE FROM task_runners WHERE owner = ANY(%s)", [dead])
        return len(dead)

    def release(self) -> None:
        try:
            with self.shared.transaction() as conn:
                conn.execute("DELETE FROM task_runners WHERE owner = %s", [self.owner])
        finally:
            self._lease.release()


def live_runners(shared: Any) -> int:
    """How many runners of the fleet hold their lease now, read from pg_locks: looking takes
    no lease and writes nothing."""
    with shared.read_only() as conn:
        owners = [row[0] for row in conn.execute("SELECT owner FROM task_runners").fetchall()]
    return sum(1 for owner in owners if shared.lease_held(LEASE_PREFIX + owner))
