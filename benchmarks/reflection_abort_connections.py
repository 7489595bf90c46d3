"""Memory reflections aborted by the next turn: does the llama-server client's pool stay small?

Usage: .venv/bin/python benchmarks/reflection_abort_connections.py [--turns 500] [--every 100]

Runs the agent in this process with the memory plugins (reflection included) and the
llama-server provider against the zero-latency scripted llama-server on loopback, all turns
on one session. Between two turns it lets the event loop run 0..39 steps (turn by turn), so
the next turn's abort lands at every point of the in-flight reflection call, which is what a
client's varying think time does to `serve`. Every `--every` turns it prints the pool's
connections (all, and those neither idle nor closed: slots it can never hand out again) and
the sockets this process holds open to the fake. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' runtime builder

from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider  # noqa: E402
from atomic_agent.plugins.llama_server.testing.connection_count import open_connections  # noqa: E402
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer  # noqa: E402
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, settle  # noqa: E402

REPLY = json.dumps([{"tool": "reply", "args": {"text": "ok"}}])


def pool_of(provider: LlamaServerProvider) -> object:
    transport = provider.client._http._transport  # noqa: SLF001
    return getattr(transport, "pool", None) or transport._pool  # noqa: SLF001  (before the fix: httpx's own)


async def run(turns: int, every: int) -> None:
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="reflection-abort-", dir=scratch) as tmp, \
            FakeLlamaServer(default_reply=REPLY) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        runtime = make_memory_runtime(Path(tmp), provider)
        session = (await runtime.run_turn("hello", working_dir=Path(tmp))).session_id
        started = time.perf_counter()
        print(f"{'turn':>6}  {'pool':>4}  {'unusable':>8}  {'sockets':>7}")
        for turn in range(1, turns + 1):
            for _ in range(turn % 40):
                await asyncio.sleep(0)
            await runtime.run_turn("and again", session_id=session)
            if turn % every == 0 or turn == turns:
                if turn == turns:
                    await settle(runtime)
                pool = pool_of(provider)
                stuck = sum(1 for c in pool.connections if not c.is_idle() and not c.is_closed())
                print(f"{turn:>6}  {len(pool.connections):>4}  {stuck:>8}  {open_connections(os.getpid(), fake.port):>7}",
                      flush=True)
                fake.requests.clear()
        metrics = runtime.service("metrics")
        aborted = metrics.counter_value("agent.memory.reflection", outcome="aborted")
        await runtime.close()
    print(f"{turns} turns in {time.perf_counter() - started:.0f} s, {aborted:.0f} reflections aborted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--every", type=int, default=100)
    args = parser.parse_args()
    asyncio.run(run(args.turns, args.every))


if __name__ == "__main__":
    main()
