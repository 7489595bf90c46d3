"""`doctor`'s lease health on the fleet's PostgreSQL ("storage.leases"): which processes hold
live work, and whether their leases are held right now.

Read from pg_locks, so looking takes no lease (a probe by `pg_try_advisory_lock` would, for a
moment, take a dead owner's): the owners of queued or running turns and undelivered steers
(the owner leases fleet_takeover asks), and every lease a plugin's records name
(postgresql_contract.FleetLeaseHolders: task runners, the Telegram poller). A dead owner that
still holds work is a warning: a serving host's takeover tick adopts it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

CHECK = "storage.leases"

# whether the advisory lock on the bigint key hashtextextended(%s, 0) is granted to a session
# of this database (a bigint key shows in pg_locks as classid = high, objid = low 32 bits)
HELD = ("exists (select 1 from pg_locks l where l.locktype = 'advisory' and l.granted and l.objsubid = 1 "
        "and l.database = (select oid from pg_database where datname = current_database()) "
        "and ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended({key}, 0))")

# each owner of live work, its queued/running turns and undelivered steers, and whether its lease is held
OWNERS = ("with work as (select owner, count(*) as n from turns where state in ('queued', 'running') "
          "and owner is not null group by owner union all select owner, count(*) from steer_queue "
          "where owner is not null and handed_back is null group by owner) "
          "select owner, sum(n)::bigint, " + HELD.format(key="%s || owner") + " from work group by owner order by owner")

NAMED = "select name, work, " + HELD.format(key="'lease:' || name") + " from ({rows}) as held (name, work) order by name"


@attrs.frozen
class Holder:
    what: str  # "owners" for the session owners, else the plugin's label ("task runners")
    name: str
    work: int
    live: bool


def read_holders(conn: Any, holders: Sequence[tuple[str, str]]) -> list[Holder]:
    """Every holder of live work or of a plugin's lease, live or dead. `holders` are the
    plugins' `(label, SQL)` (FleetLeaseHolders.leases) whose tables exist."""
    from .pg_owner_lease import OWNER_KEY_PREFIX

    found = [Holder("owners", row[0], int(row[1]), bool(row[2]))
             for row in conn.execute(OWNERS, [OWNER_KEY_PREFIX]).fetchall()]
    for label, sql in holders:
        found.extend(Holder(label, str(row[0]), int(row[1] or 0), bool(row[2]))
                     for row in conn.execute(NAMED.format(rows=sql)).fetchall())
    return found


def lease_finding(holders: list[Holder], takeover_interval_s: float) -> Any:
    """Warn when a dead holder still has work; ok with the counts otherwise."""
    from atomic_agent.api import DoctorFinding

    stranded = [h for h in holders if not h.live and h.work]
    counts = "; ".join(_count(what, [h for h in holders if h.what == what])
                       for what in dict.fromkeys(["owners", *(h.what for h in holders)]))
    if stranded:
        named = ", ".join(f"{h.name} ({h.work} {'queued/running turns or steers' if h.what == 'owners' else 'running'})"
                          for h in stranded)
        return DoctorFinding(CHECK, "warn", f"dead lease holders still hold work: {named}; {counts}",
                             f"the next serving host's takeover tick adopts it within storage.takeoverIntervalS "
                             f"({takeover_interval_s:g}s; task runs: a live scheduler's tick); if no host serves, "
                             "start one (`atomic-agent serve`, `scheduler` or `telegram run`)")
    return DoctorFinding(CHECK, "ok", counts, "")


def _count(what: str, holders: list[Holder]) -> str:
    live = [h for h in holders if h.live]
    dead = len(holders) - len(live)
    if what == "owners":
        return f"{len(holders)} owner(s) with live work ({sum(h.work for h in holders)} turns/steers), {dead} dead"
    return f"{what}: {len(live)} lease(s) held, {dead} not held"
