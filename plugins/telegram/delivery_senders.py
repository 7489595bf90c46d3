"""Who marked a chunk `attempting`, and whether that process is gone: an attempt is settled
`uncertain` (never resent) only once its sender cannot finish it any more.

On one state dir (LocalSenders) the store is opened at a host's start, so every attempt of
another sender was a dead process's. On the fleet's database (FleetSenders) another host may
be sending right now: each process holds a named lease of its own (`telegram-sender:<id>`),
and a sender is gone once its lease can be taken."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from atomic_agent.plugins.postgresql.postgresql_contract import NamedLease, SharedDatabase

SENDER_LEASE = "telegram-sender:"


class LocalSenders:
    def __init__(self) -> None:
        self.name = uuid.uuid4().hex  # stamped on this process's attempts

    @contextmanager
    def gone(self, sender: str) -> Iterator[bool]:
        yield sender != self.name

    def release(self) -> None:
        """Nothing is held on a state dir."""


class FleetSenders:
    def __init__(self, shared: SharedDatabase) -> None:
        self.shared = shared
        self.name = uuid.uuid4().hex
        lease = shared.lease(SENDER_LEASE + self.name)
        if lease is None:  # a fresh random name nobody else holds
            raise RuntimeError(f"the sender lease {self.name} is held by another process")
        self._lease: NamedLease = lease

    @contextmanager
    def gone(self, sender: str) -> Iterator[bool]:
        """Whether `sender`'s process is gone; its lease is held for the block, so it cannot
        come back meanwhile (an unnamed sender, from before attempts were stamped, is gone)."""
        if sender == self.name:
            yield False
            return
        probe = self.shared.lease(SENDER_LEASE + sender) if sender else None
        try:
            yield not sender or probe is not None
        finally:
            if probe is not None:
                probe.release()

    def release(self) -> None:
        """Let go of this process's lease: its unfinished attempts may now be settled."""
        self._lease.release()
