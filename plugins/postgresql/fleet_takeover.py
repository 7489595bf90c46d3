"""Fleet takeover: a serving host on PostgreSQL adopts the work of a host that died.

Within one state directory a restart recovers what the dead process left. In a fleet the
dead host may never come back, and its sessions may get no new message that would make a
live host take over their lane, so the answers it owed (the message it had admitted and
queued, the turn it was running, its undelivered steers) would wait for ever. Every serving
host runs this tick: it reads which owners hold live work in the database (queued or running
turns, queued steers) and asks the owner leases which of them are gone; when one is, it runs
the runtime's own recovery with `resume`, which interrupts the dead owner's running turns
(never re-run), adopts its queued turns in admission order, requeues its steers and admits
the continuation an interrupted message is owed. Several live hosts may notice the same death
at once: every step of recovery is a compare-and-set in the database, so each piece of work
is taken by exactly one of them.

A restart of the database server (a failover) drops every host's lease at once. So each pass
first renews this host's own lease; a host that had to take its own lease again gives the
others a grace (pg_owner_lease; at least two intervals of this tick) to renew theirs before it
counts them dead, so the hosts do not fence out each other's running turns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

from .pg_owner_lease import OWNER_KEY_PREFIX

TICK_NAME = "fleet_takeover"

# owners of queued or running turns and of undelivered steers whose advisory lock (the
# owner lease, pg_owner_lease: a bigint key, held as classid = high and objid = low 32 bits)
# no session of this database holds: read from pg_locks, so checking takes no lock itself
DEAD_OWNERS = (
    "with owners as (select owner from turns where state in ('queued', 'running') and owner is not null "
    "union select owner from steer_queue where owner is not null and handed_back is null) "
    "select owner from owners o where not exists (select 1 from pg_locks l where l.locktype = 'advisory' "
    "and l.granted and l.objsubid = 1 and l.database = (select oid from pg_database where datname = "
    "current_database()) and ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(%s || o.owner, 0)) "
    "order by owner")


def dead_owners(backend: Any) -> list[str]:
    """The owners holding live work whose lease nobody holds any more."""
    with backend.pool.connection() as conn:
        return [row[0] for row in conn.execute(DEAD_OWNERS, [OWNER_KEY_PREFIX])]


class FleetTakeover:
    """The tick's work: find dead owners, then recover (see the module docstring)."""

    def __init__(self, runtime: RuntimeView, backend: Any) -> None:
        self.runtime = runtime
        self.backend = backend
        self.takeovers = 0  # recoveries this host ran because an owner had died

    async def run(self) -> list[str]:
        """The owners whose lease was missing on this pass (recovery takes over those past the
        leases' grace); empty when every owner is alive."""
        import asyncio

        if self.runtime.stopping:
            return []
        await asyncio.to_thread(self.backend.renew_leases)
        dead = await asyncio.to_thread(dead_owners, self.backend)
        if dead:
            await self.runtime.recover(resume=True)
            self.takeovers += 1
        return dead


def takeover_ticks(runtime: RuntimeView, backend: Any, interval_s: float) -> Iterable[Any]:
    from atomic_agent.api import TickSpec

    takeover = FleetTakeover(runtime, backend)
    return [TickSpec(TICK_NAME, interval_s, takeover.run,
                     summary="adopt the queued and running work of a dead host of the fleet")]
