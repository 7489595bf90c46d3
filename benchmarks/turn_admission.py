"""Durable turn admission and steering numbers on sessions.sqlite (WAL).

Prints sustained turn admissions per second and durable steer acceptances per second with
synchronous=FULL and NORMAL, and the p50/p99 latency of `Runtime.steer` acceptance while
50 sessions each have a turn running.

Usage: .venv/bin/python benchmarks/turn_admission.py [--admissions 2000] [--sessions 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.turn_ledger import TurnLedger


def admissions_per_second(state: Path, count: int, synchronous: str) -> tuple[float, float]:
    store = SessionStore(state)
    store.conn.execute(f"PRAGMA synchronous={synchronous}")
    sessions = [store.create(state).id for _ in range(10)]
    ledger, queue = TurnLedger(store, "bench"), SteerQueue(store, "bench")
    started = time.perf_counter()
    for i in range(count):
        ledger.admit(sessions[i % len(sessions)], f"message {i}", "cli")
    turns = count / (time.perf_counter() - started)
    started = time.perf_counter()
    for i in range(count):
        queue.enqueue(sessions[i % len(sessions)], "turn", f"steer {i}")
    steers = count / (time.perf_counter() - started)
    store.close()
    return turns, steers


class _WaitTool:
    def __init__(self, release: asyncio.Event) -> None:
        self.release = release

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def wait(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            await self.release.wait()
            return ToolResult.ok("released")

        return [ToolSpec("bench.wait", "Wait until released.", {"type": "object", "properties": {}},
                         ResourceClass.PURE_READ, wait)]


async def steer_latency(state: Path, sessions: int, per_session: int) -> list[float]:
    release = asyncio.Event()
    host = fresh_plugin_host(environ={})
    host.register(_WaitTool(release), "bench_wait")
    provider = ScriptedProvider([], default=calls(("bench.wait", {})))
    runtime = Runtime(boot(state, environ={}, host=host), provider=provider, environ={})
    ids = [runtime.open_session(None, state).id for _ in range(sessions)]
    turns = [asyncio.ensure_future(runtime.run_turn("work", session_id=sid)) for sid in ids]
    while sum(runtime.inbox.is_open(sid) for sid in ids) < sessions:
        await asyncio.sleep(0.01)
    latencies = []
    for round_ in range(per_session):
        for sid in ids:  # round-robin: every session has a turn in flight the whole time
            started = time.perf_counter()
            outcome = runtime.steer(sid, f"steer {round_}")
            latencies.append((time.perf_counter() - started) * 1000)
            assert outcome.steered, outcome
    for sid in ids:
        runtime.stop(sid)
    release.set()
    await asyncio.gather(*turns)
    await runtime.close()
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admissions", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--steers-per-session", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("FULL", "NORMAL"):
            state = Path(tmp) / mode
            state.mkdir()
            turns, steers = admissions_per_second(state, args.admissions, mode)
            print(f"synchronous={mode:<6} turn admissions: {turns:8.0f}/s   durable steer acceptances: "
                  f"{steers:8.0f}/s   ({args.admissions} each, one commit apiece)")
        latencies = asyncio.run(steer_latency(Path(tmp) / "steer", args.sessions, args.steers_per_session))
        q = statistics.quantiles(latencies, n=100)
        print(f"steer acceptance with {args.sessions} running turns (synchronous=FULL, {len(latencies)} steers): "
              f"p50 {q[49]:.3f} ms  p99 {q[98]:.3f} ms")


if __name__ == "__main__":
    main()
