"""Owner leases on every store implementation, with time under the test's control."""

from __future__ import annotations

import asyncio

import pytest

from atomic_agent.persistence.owner_lease import StoreOwnerLease
from atomic_agent.persistence.store_clock import ManualClock
from tests.persistence.store_harness import StoreHarness


def _leases(harness: StoreHarness, clock: ManualClock) -> StoreOwnerLease:
    return StoreOwnerLease(harness.open(clock=clock))


async def test_only_one_of_two_live_owners_holds_a_lease(harness: StoreHarness):
    clock = ManualClock()
    a, b = _leases(harness, clock), _leases(harness, clock)
    held = await a.acquire("sessions", "owner-a", ttl_s=30)
    assert held is not None and held.token == 1
    assert await b.acquire("sessions", "owner-b", ttl_s=30) is None
    assert (await b.holder("sessions")).owner == "owner-a"


async def test_racing_owners_get_exactly_one_lease(harness: StoreHarness):
    clock = ManualClock()
    owners = [_leases(harness, clock) for _ in range(2)]
    got = await asyncio.gather(*(owners[i % 2].acquire("l", f"o{i}", 10) for i in range(20)))
    assert len([g for g in got if g is not None]) == 1


async def test_an_expired_lease_passes_to_the_next_owner_with_a_new_token(harness: StoreHarness):
    clock = ManualClock()
    a, b = _leases(harness, clock), _leases(harness, clock)
    first = await a.acquire("l", "a", ttl_s=10)
    clock.advance(10)
    assert await a.holder("l") is None
    second = await b.acquire("l", "b", ttl_s=10)
    assert second is not None and second.token == first.token + 1


async def test_an_expired_lease_cannot_be_renewed_or_released_by_its_old_holder(harness: StoreHarness):
    clock = ManualClock()
    a, b = _leases(harness, clock), _leases(harness, clock)
    first = await a.acquire("l", "a", ttl_s=5)
    clock.advance(6)
    assert await a.renew(first, ttl_s=5) is None
    second = await b.acquire("l", "b", ttl_s=5)
    assert not await a.release(first)
    assert (await b.holder("l")) == second


async def test_renew_extends_and_release_frees_the_lease(harness: StoreHarness):
    clock = ManualClock()
    a, b = _leases(harness, clock), _leases(harness, clock)
    lease = await a.acquire("l", "a", ttl_s=5)
    clock.advance(4)
    renewed = await a.renew(lease, ttl_s=5)
    assert renewed is not None and renewed.token == lease.token and renewed.expires_at == clock.now() + 5
    clock.advance(4)
    assert await b.acquire("l", "b", ttl_s=5) is None
    assert await a.release(renewed)
    assert (await b.acquire("l", "b", ttl_s=5)).token == lease.token + 1


async def test_reacquiring_a_lease_you_hold_extends_it_without_a_new_token(harness: StoreHarness):
    clock = ManualClock()
    a = _leases(harness, clock)
    first = await a.acquire("l", "a", ttl_s=5)
    again = await a.acquire("l", "a", ttl_s=50)
    assert again.token == first.token and again.expires_at == clock.now() + 50


async def test_bad_lease_arguments_are_refused(harness: StoreHarness):
    a = _leases(harness, ManualClock())
    with pytest.raises(ValueError, match="positive number of seconds"):
        await a.acquire("l", "a", ttl_s=0)
    with pytest.raises(ValueError, match="non-empty str"):
        await a.acquire("l", "", ttl_s=1)
