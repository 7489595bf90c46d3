"""The task scheduler's numbers: tick cost with many pending tasks, and due -> admission latency.

For each size it fills tasks.sqlite with that many pending tasks due far in the future plus
`--due` tasks due now, then prints: the due query (p50/p99, read through the partial index:
only due rows are touched), an empty tick (nothing due), a tick that claims and runs the due
batch through a runtime over a scripted provider, and for those runs the latency from the
tick's start to `run_turn` (the turn's admission) and to the first model request. The
scheduler's own period (tasks.schedulerTickMs, 5 s by default) adds at most one period on
top of these.

Then one claim (the due row taken for an owner and its run row inserted, committed durably)
on tasks.sqlite and on PostgreSQL side by side (a throwaway server with fsync on, on
loopback; `FOR UPDATE SKIP LOCKED`), p50/p99 over `--claims` due tasks.

Usage: .venv/bin/python benchmarks/task_scheduler.py [--pending 10000,100000] [--due 10] [--claims 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.config.config_file import CONFIG_VERSION
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.storage import store_clock
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import ScriptedProvider

FAR = 10 * 365 * 86_400_000


def _fill(runtime: Runtime, pending: int) -> None:
    store = runtime.service("tasks").store
    now = store_clock.now_ms()
    rows = [(f"bench{n:07d}", f"later {n}", "pending", "cli", "user", None, "ephemeral", None, now + FAR + n,
             now + FAR + n, 0, 3, now, now) for n in range(pending)]
    with store.database.write() as conn:
        conn.executemany("INSERT INTO tasks (id, message, status, origin, wake_source, session_id, session_mode, "
                         "schedule, due_at, occurrence_at, attempts, max_attempts, created_at, updated_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


class TimedProvider(ScriptedProvider):
    def __init__(self) -> None:
        super().__init__([])
        self.first_request: list[float] = []

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        self.first_request.append(time.perf_counter())
        return await super().complete(request, on_delta)


async def measure(root: Path, pending: int, due: int) -> dict[str, float]:
    state = root / f"state-{pending}"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION,
                                                   "tasks": {"schedulerTickMs": 3_600_000, "schedulerBatch": due}}))
    host = fresh_plugin_host()
    host.register(tasks_plugin, "tasks")
    provider = TimedProvider()
    runtime = Runtime(boot(state, environ={}, host=host), provider=provider, environ={})
    await runtime.start()
    svc = runtime.service("tasks")
    svc.create("warm up")  # the first turn builds the prompt plan and templates: not what is measured
    await svc.tick()
    _fill(runtime, pending)
    empty_started = time.perf_counter()
    await svc.tick()
    empty_ms = (time.perf_counter() - empty_started) * 1000
    for n in range(due):
        svc.create(f"due now {n}")
    store = svc.store
    now = store_clock.now_ms()
    samples = []
    for _ in range(200):
        started = time.perf_counter()
        found = store.due_ids(now, due)
        samples.append((time.perf_counter() - started) * 1000)
    assert len(found) == due
    samples.sort()
    admitted: list[float] = []
    original = runtime.run_turn

    async def timed_run_turn(*args: Any, **kwargs: Any) -> Any:
        admitted.append(time.perf_counter())
        return await original(*args, **kwargs)

    runtime.run_turn = timed_run_turn  # type: ignore[method-assign]
    tick_started = time.perf_counter()
    report = await svc.tick()
    tick_ms = (time.perf_counter() - tick_started) * 1000
    await runtime.close()
    to_admission = [(t - tick_started) * 1000 for t in admitted]
    to_inference = [(t - tick_started) * 1000 for t in provider.first_request if t >= tick_started]
    return {"due_query_p50_ms": samples[len(samples) // 2], "due_query_p99_ms": samples[int(len(samples) * 0.99)],
            "empty_tick_ms": empty_ms, "tick_ms": tick_ms, "claimed": report.claimed,
            "admission_p50_ms": statistics.median(to_admission), "admission_max_ms": max(to_admission),
            "first_request_p50_ms": statistics.median(to_inference)}


def claim_latency(store: Any, claims: int) -> tuple[float, float]:
    """p50 and p99 ms of `store.claim` over `claims` due one-shot tasks."""
    from atomic_agent.plugins.tasks.occurrence_plan import plan_claim

    now = store_clock.now_ms()
    for n in range(claims):
        store.create(message=f"claim {n}", origin="cli", wake_source="user", session_id=None,
                     session_mode="ephemeral", schedule=None, due_at=now, max_attempts=3, now=now,
                     task_id=f"claim{n:06d}")
    samples = []
    for n in range(claims):
        started = time.perf_counter()
        task, _ = store.claim(f"claim{n:06d}", now, "bench", lambda t: plan_claim(t, now))
        samples.append((time.perf_counter() - started) * 1000)
        assert task is not None
    samples.sort()
    return samples[len(samples) // 2], samples[int(len(samples) * 0.99)]


def compare_claims(root: Path, claims: int) -> None:
    from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
    from atomic_agent.plugins.postgresql.pg_backend import PgBackend
    from atomic_agent.plugins.postgresql.shared_database import SharedDatabase
    from atomic_agent.plugins.postgresql.testing.pg_server import benchmark_postgres
    from atomic_agent.plugins.tasks.pg_task_database import pg_task_database
    from atomic_agent.plugins.tasks.task_database import TaskDatabase, tasks_db_path
    from atomic_agent.plugins.tasks.task_store import TaskStore
    from atomic_agent.turns import session_backend_kit

    sqlite_store = TaskStore(TaskDatabase.open(tasks_db_path(root)))
    p50, p99 = claim_latency(sqlite_store, claims)
    sqlite_store.database.close()
    print(f"claim (sqlite, synchronous FULL): p50 {p50:.2f} ms p99 {p99:.2f} ms over {claims} due tasks")
    with benchmark_postgres("claim (postgresql)") as server:
        if server is None:
            return
        backend = PgBackend(DatabaseUrl("agent", "127.0.0.1", server.port, "postgres", server.password),
                            session_backend_kit)
        p50, p99 = claim_latency(TaskStore(pg_task_database(SharedDatabase(backend))), claims)
        backend.close()
        print(f"claim (postgresql, loopback, fsync on): p50 {p50:.2f} ms p99 {p99:.2f} ms over {claims} due tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", default="10000,100000")
    parser.add_argument("--due", type=int, default=10)
    parser.add_argument("--claims", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.pending.split(",")):
            r = asyncio.run(measure(Path(tmp), size, args.due))
            print(f"{size:>7} pending + {args.due} due: due query p50 {r['due_query_p50_ms']:.3f} ms "
                  f"p99 {r['due_query_p99_ms']:.3f} ms | empty tick {r['empty_tick_ms']:.2f} ms | tick running "
                  f"{int(r['claimed'])} tasks {r['tick_ms']:.1f} ms | tick start -> admission p50 "
                  f"{r['admission_p50_ms']:.2f} ms max {r['admission_max_ms']:.2f} ms | -> first model request p50 "
                  f"{r['first_request_p50_ms']:.2f} ms")
        compare_claims(Path(tmp), args.claims)


if __name__ == "__main__":
    main()
