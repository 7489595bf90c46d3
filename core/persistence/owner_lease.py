"""Owner leases: a named lease with an expiry, so two live owners on one store can tell who
holds what, and recovery interrupts only work whose owner stopped renewing.

`StoreOwnerLease` keeps each lease as one key (`lease.<name>`) in any Store, changed only by
compare-and-set inside a transaction, so exactly one of several racing owners acquires it.
Every change of holder increments `token`, a fencing token: work done under a lease can carry
it (for example as a writer generation) so a previous holder's late writes are refused.
An expired lease is lost: it cannot be renewed, only acquired again (with a new token).
Tokens only grow: a released lease stays in the store, expired, holding its last token.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import attrs

from atomic_agent.persistence.key_space import key_path
from atomic_agent.persistence.store_protocol import Store, StoreReader

LEASE_PREFIX = "lease"


@attrs.frozen
class Lease:
    name: str
    owner: str
    token: int
    expires_at: float


@runtime_checkable
class OwnerLease(Protocol):
    async def acquire(self, name: str, owner: str, ttl_s: float) -> Lease | None:
        """Take the lease if it is free or expired (or extend it if `owner` holds it); None if
        another owner holds it."""
        ...

    async def renew(self, lease: Lease, ttl_s: float) -> Lease | None:
        """Extend a lease still held and unexpired; None if it was lost."""
        ...

    async def release(self, lease: Lease) -> bool:
        """Give the lease up; False if it was no longer held as `lease`."""
        ...

    async def holder(self, name: str) -> Lease | None:
        """The current unexpired lease, if any."""
        ...


def _check_ttl(ttl_s: float) -> float:
    if isinstance(ttl_s, bool) or not isinstance(ttl_s, (int, float)) or not ttl_s > 0:
        raise ValueError(f"a lease ttl must be a positive number of seconds, got {ttl_s!r}")
    return float(ttl_s)


def _check_owner(owner: str) -> str:
    if not isinstance(owner, str) or not owner:
        raise ValueError(f"a lease owner must be a non-empty str, got {owner!r}")
    return owner


class StoreOwnerLease:
    """OwnerLease over any Store; times come from the store's clock."""

    def __init__(self, store: Store, prefix: str = LEASE_PREFIX) -> None:
        self.store = store
        self.prefix = prefix

    def key(self, name: str) -> str:
        return key_path(self.prefix, name)

    @staticmethod
    def _lease(value: dict | None) -> Lease | None:
        return None if value is None else Lease(value["name"], value["owner"], value["token"], value["expires_at"])

    async def acquire(self, name: str, owner: str, ttl_s: float) -> Lease | None:
        _check_owner(owner)
        ttl = _check_ttl(ttl_s)
        key = self.key(name)
        async with self.store.transaction() as tx:
            now = self.store.clock.now()
            current = await tx.get(key)
            held = self._lease(current)
            if held is not None and held.owner != owner and held.expires_at > now:
                return None
            if held is None:
                token = 1
            elif held.owner == owner and held.expires_at > now:
                token = held.token  # still ours: an extension, not a new holder
            else:
                token = held.token + 1
            lease = Lease(name, owner, token, now + ttl)
            new = attrs.asdict(lease)
            won = (await tx.write_if_absent(key, new) if current is None
                   else await tx.compare_and_set(key, current, new))
            return lease if won else None

    async def renew(self, lease: Lease, ttl_s: float) -> Lease | None:
        ttl = _check_ttl(ttl_s)
        key = self.key(lease.name)
        async with self.store.transaction() as tx:
            now = self.store.clock.now()
            if lease.expires_at <= now:
                return None
            renewed = attrs.evolve(lease, expires_at=now + ttl)
            won = await tx.compare_and_set(key, attrs.asdict(lease), attrs.asdict(renewed))
            return renewed if won else None

    async def release(self, lease: Lease) -> bool:
        # expire it rather than delete it: the key keeps the last token, so the next holder's
        # token is still higher than every earlier one (a deleted key would start again at 1)
        async with self.store.transaction() as tx:
            released = attrs.evolve(lease, expires_at=min(lease.expires_at, self.store.clock.now()))
            return await tx.compare_and_set(self.key(lease.name), attrs.asdict(lease), attrs.asdict(released))

    async def holder(self, name: str, reader: StoreReader | None = None) -> Lease | None:
        held = self._lease(await (reader or self.store).get(self.key(name)))
        if held is None or held.expires_at <= self.store.clock.now():
            return None
        return held
