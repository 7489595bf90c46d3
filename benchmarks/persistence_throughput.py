"""Persistence throughput on SQLite (WAL): sustained durable message acceptances per second and
turn admissions per second, at synchronous NORMAL and FULL, with 1 and several concurrent
writers (tasks in one process, and two processes on one file); the latency of a queue
acceptance with 50 sessions accepting at once; and what switching `PRAGMA synchronous` between
transactions costs.

Usage: .venv/bin/python benchmarks/persistence_throughput.py [--seconds 1.5] [--dir DIR]
The disk's fsync latency dominates every FULL number and drifts on virtual disks; run it twice.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from atomic_agent.persistence.session_queues import SessionQueues, conversation_stream
from atomic_agent.persistence.sqlite_store import SqliteStore
from atomic_agent.persistence.writer_generation import WriterGenerations

Op = Callable[[SqliteStore, int, int], Awaitable[None]]  # store, writer index, iteration


def accept_op(durable: bool) -> Op:
    queues = SessionQueues("bench")

    async def op(store: SqliteStore, writer: int, i: int) -> None:
        async with store.transaction(durable=durable) as tx:
            await queues.accept(tx, f"s{writer % 8}", "send", f"message {writer}-{i}", origin="bench")
    return op


def admission_op(durable: bool) -> Op:
    """A turn admission as seed 000 describes it: the trigger message, the turn state, its writer
    generation and the lane position, all committed before anyone is told the turn exists."""
    gens = WriterGenerations()

    async def op(store: SqliteStore, writer: int, i: int) -> None:
        session = f"s{writer % 8}"
        turn = f"t{writer}-{i}-{os.getpid()}"
        async with store.transaction(durable=durable) as tx:
            seq = await tx.append(conversation_stream(session), {"kind": "user", "text": f"run {turn}"})
            await tx.write_if_absent(f"turn.{turn}", {"session": session, "state": "queued", "message_seq": seq})
            await gens.start_writer(tx, turn)
            lane = await tx.get(f"lane.{session}") or 0
            await tx.put(f"lane.{session}", lane + 1)
    return op


async def sustained(store: SqliteStore, op: Op, writers: int, seconds: float) -> float:
    deadline = time.perf_counter() + seconds
    done = 0

    async def writer(index: int) -> None:
        nonlocal done
        i = 0
        while time.perf_counter() < deadline:
            await op(store, index, i)
            i += 1
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(writer(w) for w in range(writers)))
    return done / (time.perf_counter() - start)


async def one_case(path: Path, kind: str, durable: bool, writers: int, seconds: float) -> tuple[float, float]:
    store = SqliteStore.open(path)
    op = accept_op(durable) if kind == "accept" else admission_op(durable)
    before = (store.writer_stats.commits, store.writer_stats.units_committed)
    rate = await sustained(store, op, writers, seconds)
    commits = store.writer_stats.commits - before[0]
    units = store.writer_stats.units_committed - before[1]
    await store.close()
    return rate, (units / commits if commits else 0.0)


def two_processes(path: Path, kind: str, durable: bool, writers: int, seconds: float) -> float:
    SqliteStore.open(path)  # migrate once before the race
    cmd = [sys.executable, __file__, "--child", str(path), kind, str(int(durable)), str(writers), str(seconds)]
    children = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    return sum(json.loads(child.communicate()[0])["rate"] for child in children)


async def acceptance_latency(path: Path, sessions: int, per_session: int) -> tuple[float, float]:
    store = SqliteStore.open(path)
    queues = SessionQueues("latency")
    samples: list[float] = []

    async def session(index: int) -> None:
        for i in range(per_session):
            start = time.perf_counter()
            await queues.submit(store, f"session-{index}", "steering", f"steer {i}")
            samples.append(time.perf_counter() - start)

    await asyncio.gather(*(session(s) for s in range(sessions)))
    await store.close()
    samples.sort()
    return samples[len(samples) // 2] * 1000, samples[min(len(samples) - 1, int(len(samples) * 0.99))] * 1000


def pragma_switch_cost(path: Path, rounds: int = 200) -> dict[str, float]:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS t (x TEXT)")

    def commit() -> float:
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO t VALUES ('x')")
        conn.execute("COMMIT")
        return time.perf_counter() - start

    pragma, normal, full = [], [], []
    for _ in range(rounds):
        start = time.perf_counter()
        conn.execute("PRAGMA synchronous = FULL")
        pragma.append(time.perf_counter() - start)
        full.append(commit())
        start = time.perf_counter()
        conn.execute("PRAGMA synchronous = NORMAL")
        pragma.append(time.perf_counter() - start)
        normal.append(commit())
    conn.close()
    ms = 1000.0
    return {"pragma_ms": statistics.median(pragma) * ms, "normal_commit_ms": statistics.median(normal) * ms,
            "full_commit_ms": statistics.median(full) * ms}


async def main(seconds: float, directory: Path) -> None:
    print(f"SQLite {sqlite3.sqlite_version}, WAL, {seconds:g} s per case, files in {directory}")
    print("(durable=True commits at synchronous=FULL, durable=False at NORMAL; group commit on)\n")
    print(f"{'what':<34}{'sync':<8}{'writers':>8}{'per second':>14}{'units/commit':>14}")
    n = 0
    for kind, label in (("accept", "durable message acceptances"), ("admit", "turn admissions")):
        for durable in (False, True):
            for writers in (1, 8, 32):
                n += 1
                rate, group = await one_case(directory / f"case{n}.sqlite", kind, durable, writers, seconds)
                sync = "FULL" if durable else "NORMAL"
                print(f"{label:<34}{sync:<8}{writers:>8}{rate:>14,.0f}{group:>14.1f}")
            n += 1
            rate = two_processes(directory / f"case{n}.sqlite", kind, durable, 8, seconds)
            print(f"{label:<34}{'FULL' if durable else 'NORMAL':<8}{'2x8 proc':>8}{rate:>14,.0f}{'':>14}")
    p50, p99 = await acceptance_latency(directory / "latency.sqlite", sessions=50, per_session=20)
    print(f"\nqueue acceptance (durable) with 50 sessions at once: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    cost = pragma_switch_cost(directory / "pragma.sqlite")
    print(f"PRAGMA synchronous switch: {cost['pragma_ms']:.4f} ms per switch; commit right after switching: "
          f"NORMAL {cost['normal_commit_ms']:.3f} ms, FULL {cost['full_commit_ms']:.3f} ms (one fsync)")


def child(path: str, kind: str, durable: str, writers: str, seconds: str) -> None:
    async def run() -> float:
        store = SqliteStore.open(Path(path), busy_timeout_s=30.0)
        op = accept_op(durable == "1") if kind == "accept" else admission_op(durable == "1")
        rate = await sustained(store, op, int(writers), float(seconds))
        await store.close()
        return rate

    print(json.dumps({"rate": asyncio.run(run())}))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:7])
        raise SystemExit(0)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.5, help="duration of each throughput case")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the database files (default: a temp dir)")
    args = parser.parse_args()
    if args.dir is not None:
        args.dir.mkdir(parents=True, exist_ok=True)
        asyncio.run(main(args.seconds, args.dir))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            asyncio.run(main(args.seconds, Path(tmp)))
