"""Approval waiters on PostgreSQL: how fast a waiter hears an answer given on another host,
and how many record reads the waiting costs, with the database's notices (approval_notices)
and with polling alone (every 0.1 s, what waiters did before).

    .venv/bin/python benchmarks/approval_wakeups.py [--waiters 1,50,200] [--idle-s 2]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from atomic_agent.approval.approval_records import APPROVAL, OPERATOR, FrozenCall
from atomic_agent.turns import session_backend_kit


async def measure(waiting_backend: Any, answering_backend: Any, waiters: int, idle_s: float,
                  notices: bool) -> tuple[float, float, float]:
    """(reads per second while idle, wake p50 ms, wake p99 ms)."""
    records = waiting_backend.approvals()
    if not notices:
        records.notices = None
    reads = 0
    read = records._get_with_now

    def counted(approval_id: str) -> Any:
        nonlocal reads
        reads += 1
        return read(approval_id)

    records._get_with_now = counted
    asked = [records.create(kind=APPROVAL, session_id=f"s{i}", category="shell", level=1, summary="make",
                            frozen=FrozenCall("os.shell", '{"command":"make"}', "/w"), ttl_s=600.0,
                            call_key=f"s{i}/0/1/0") for i in range(waiters)]
    woke: dict[str, float] = {}

    async def wait(record_id: str) -> None:
        await records.wait(record_id)
        woke[record_id] = time.monotonic()

    tasks = [asyncio.ensure_future(wait(r.id)) for r in asked]
    await asyncio.sleep(1.0)  # settled in: the listener is up, the first reads are done
    before = reads
    await asyncio.sleep(idle_s)
    idle_reads = (reads - before) / idle_s
    answered: dict[str, float] = {}
    answers = answering_backend.approvals()
    for r in asked:
        answered[r.id] = time.monotonic()
        await asyncio.to_thread(answers.answer, r.id, "once", principal=OPERATOR, surface="bench")
        await asyncio.sleep(0.01)
    await asyncio.gather(*tasks)
    lat = sorted((woke[i] - answered[i]) * 1000 for i in answered)
    return idle_reads, statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waiters", default="1,50,200")
    parser.add_argument("--idle-s", type=float, default=2.0)
    args = parser.parse_args()
    from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
    from atomic_agent.plugins.postgresql.pg_backend import PgBackend
    from atomic_agent.plugins.postgresql.testing.pg_server import benchmark_postgres

    with benchmark_postgres() as server:
        if server is None:
            return
        url = DatabaseUrl("agent", "127.0.0.1", server.port, "postgres", server.password)
        print("| wake-up | waiters | reads/s while waiting | answer to wake p50 | p99 |")
        print("|---|---|---|---|---|")
        for notices in (False, True):
            for count in [int(c) for c in args.waiters.split(",")]:
                waiting, answering = PgBackend(url, session_backend_kit), PgBackend(url, session_backend_kit)
                try:
                    idle, p50, p99 = asyncio.run(measure(waiting, answering, count, args.idle_s, notices))
                finally:
                    waiting.close()
                    answering.close()
                print(f"| {'notices' if notices else 'polling 0.1 s'} | {count} | {idle:,.0f} | {p50:.1f} ms | "
                      f"{p99:.1f} ms |", flush=True)


if __name__ == "__main__":
    main()
