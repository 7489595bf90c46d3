"""Turn admission and turn latency on both session backends, side by side: SQLite
(sessions.sqlite, synchronous=FULL) and PostgreSQL (a real local server with fsync on,
started here as the test fixture starts it).

Each client is a thread with its own store object (what a separate process has) and its own
session (an independent lane). Prints, per backend and client count, admissions per second
(one durable commit each) and the p50/p99 latency of a whole ledger turn: admit, start (its
opening transcript rows), one fenced reply row, finalize — four commits, no model.

Usage: .venv/bin/python benchmarks/storage_backends.py [--turns 200] [--clients 1,10,50]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_agent.sessions.store_errors import SessionStoreLockedError
from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED, TranscriptEntry
from atomic_agent.turns import session_backend_kit
from atomic_agent.turns.session_backends import SQLITE_BACKEND


def run_clients(backend: Any, where: Path, clients: int,
                per_client: int) -> tuple[float, float, list[float], list[int]]:
    """(admissions/s, turns/s, turn latencies in ms, [admissions, turns] refused as locked) with
    `clients` threads; the rates count only what was committed."""
    stores = [backend.open_store(where) for _ in range(clients)]
    sessions = [store.create(where) for store in stores]
    barrier = threading.Barrier(clients + 1)
    latencies: list[float] = []
    errors: list[BaseException] = []
    refused = [0, 0]  # admissions, turns refused with "locked"

    def admit(i: int) -> None:
        ledger = backend.ledger(stores[i], f"bench-{i}")
        barrier.wait()
        for n in range(per_client):
            try:
                ledger.admit(sessions[i].id, f"message {n}", "http", lane=f"admit-{i}")
            except SessionStoreLockedError:
                refused[0] += 1

    def turns(i: int) -> None:
        store, session = stores[i], sessions[i]
        ledger = backend.ledger(store, f"bench-{i}")
        barrier.wait()
        for n in range(per_client):
            began = time.perf_counter()
            try:
                ticket = ledger.admit(session.id, f"turn {n}", "http")
                started = ledger.start(ticket.turn_id, session)
                store.fenced(started.guard).append(session, [TranscriptEntry(REPLY, started.turn_index, text="ok")])
                ledger.finalize(started.guard, session, [TranscriptEntry(TURN_FINISHED, started.turn_index,
                                                                         status="done", reason="reply")],
                                "completed", "reply", None, "ok")
            except SessionStoreLockedError:  # a lock wait past the timeout: refused, counted, next session
                refused[1] += 1
                session = store.create(where)
                continue
            latencies.append((time.perf_counter() - began) * 1000)

    def timed(work: Callable[[int], None]) -> float:
        def guarded(i: int) -> None:
            try:
                work(i)
            except BaseException as exc:
                errors.append(exc)
                raise

        threads = [threading.Thread(target=guarded, args=(i,)) for i in range(clients)]
        for thread in threads:
            thread.start()
        barrier.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        barrier.reset()
        if errors:
            raise errors[0]
        return time.perf_counter() - began

    admitted = (clients * per_client - refused[0]) / timed(admit)
    turned = (clients * per_client - refused[1]) / timed(turns)
    for store in stores:
        store.close()
    return admitted, turned, latencies, refused


def report(name: str, backend: Any, where: Path, client_counts: list[int], turns: int) -> None:
    for clients in client_counts:
        per_client = max(1, turns // clients)
        admitted, turned, latencies, refused = run_clients(backend, where, clients, per_client)
        q = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else (latencies or [0.0]) * 99
        print(f"{name:<10} clients={clients:<3} admissions {admitted:8.0f}/s   turns {turned:7.0f}/s   "
              f"turn latency p50 {q[49]:7.2f} ms  p99 {q[98]:7.2f} ms   ({clients}x{per_client}; refused as "
              f"locked: {refused[0]} admissions, {refused[1]} turns)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200, help="per client count, split across the clients")
    parser.add_argument("--clients", default="1,10,50")
    args = parser.parse_args()
    counts = [int(c) for c in args.clients.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        report("sqlite", SQLITE_BACKEND, Path(tmp), counts, args.turns)
    from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
    from atomic_agent.plugins.postgresql.pg_backend import PgBackend
    from atomic_agent.plugins.postgresql.testing.pg_server import benchmark_postgres

    with benchmark_postgres() as server:
        if server is None:
            return
        backend = PgBackend(DatabaseUrl("agent", "127.0.0.1", server.port, "postgres", server.password),
                            session_backend_kit, pool_size=max(counts) + 2)
        report("postgresql", backend, Path("unused"), counts, args.turns)
        backend.close()


if __name__ == "__main__":
    main()
