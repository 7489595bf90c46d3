"""Host-surface numbers: POST /v1/chat/completions requests per second and p50/p99 latency
with a zero-latency provider at 1, 10 and 50 concurrent clients, and the sidecar's event
throughput over a real pipe.

Usage: .venv/bin/python benchmarks/serve_throughput.py [--requests N] [--events N] [--profile N]
                                                      [--clients 1,10,50]

`--profile N` profiles the server's thread (its event loop: routes, runtime, SQLite) and
prints the N functions with the most internal and cumulative time: where a request goes.

Every request is a full agent turn (a new session, the user message and the reply
committed to sessions.sqlite and fsynced before the response: group commit, one WAL fsync
shared by the turns that commit meanwhile; the fsyncs per request are printed), so the
numbers include the runtime and the durable writes, not just HTTP. The clients are one
small keep-alive HTTP/1.1 connection each (`KeepAliveClient`), so the figures are the
server's, not a client library's. Each level runs twice:
with the clients in a process of their own (as real clients are; on 2 cores, client and
server each get one) and with the clients inside the server's process, sharing its GIL (the
server on its own thread and event loop), a conservative floor.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from atomic_agent.api import create_runtime, fresh_plugin_host
from atomic_agent.runtime.boot_context import boot
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls

CONCURRENCY = (1, 10, 50)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


class ServerThread:
    """`serve`'s app with a zero-latency scripted provider, on 127.0.0.1 in its own thread."""

    def __init__(self, state: Path, profile: bool = False) -> None:
        from atomic_agent.plugins.serve.http_app import build_app
        from atomic_agent.plugins.serve.serve_runner import make_server
        from atomic_agent.plugins.serve.server_context import ServeContext, ServeSettings

        self.ctx = ServeContext(ServeSettings(working_dir=state))
        # IPPROTO_TCP as `serve` gets it from getaddrinfo: asyncio sets TCP_NODELAY only on sockets
        # whose proto says TCP, and without it every response waited ~40 ms for a delayed ACK
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = make_server(build_app(self.ctx), "127.0.0.1", self.port)
        self.state = state
        self.profiler: cProfile.Profile | None = cProfile.Profile() if profile else None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()
        self.ready.wait(60)

    async def _main(self) -> None:
        if self.profiler is not None:
            self.profiler.enable()  # this thread only: the server's loop
        provider = ScriptedProvider(default=calls(("reply", {"text": "ok"})))
        boot_context = boot(self.state, environ={}, host=fresh_plugin_host())
        runtime = await create_runtime(boot_context=boot_context, provider=provider, ask=self.ctx.approvals.ask)
        self.ctx.bind(runtime)
        serving = asyncio.ensure_future(self.server.serve(sockets=[self.sock]))
        while not self.server.started:
            await asyncio.sleep(0.005)
        self.ready.set()
        try:
            await serving
        finally:
            await self.ctx.shutdown()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(60)


class KeepAliveClient:
    """One HTTP/1.1 keep-alive connection that POSTs and reads whole responses.

    The load generator is deliberately this small: with httpx as the client, 50 concurrent
    connections cost the client's process more than the server spent (its pool's bookkeeping
    grows with the waiting requests), so the 50-client figure measured the client."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
                          f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        head = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
        status = int(head.split(" ", 2)[1])
        if "transfer-encoding: chunked" in head:
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await self.reader.readexactly(size + 2)
                if size == 0:
                    break
        else:
            length = next(int(line.split(":", 1)[1]) for line in head.split("\r\n")
                          if line.startswith("content-length:"))
            await self.reader.readexactly(length)
        return status

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def load(base: str, clients: int, total: int) -> tuple[float, list[float]]:
    host, port = base.removeprefix("http://").split(":")
    latencies: list[float] = []
    body = json.dumps({"model": "atomic-agent", "messages": [{"role": "user", "content": "ping"}]}).encode()
    per_client = max(1, total // clients)
    connections = [KeepAliveClient(host, int(port)) for _ in range(clients)]

    async def worker(client: KeepAliveClient) -> None:
        for _ in range(per_client):
            started = time.perf_counter()
            status = await client.post("/v1/chat/completions", body)
            latencies.append(time.perf_counter() - started)
            if status != 200:
                raise RuntimeError(f"POST /v1/chat/completions answered {status}")

    try:
        await worker(connections[0])  # warm-up request, not counted
        latencies.clear()
        started = time.perf_counter()
        await asyncio.gather(*(worker(client) for client in connections))
        elapsed = time.perf_counter() - started
    finally:
        for client in connections:
            await client.close()
    return elapsed, latencies


def load_in_own_process(base: str, clients: int, total: int) -> tuple[float, list[float]]:
    """`load` run by a child interpreter (this script with --load-only): the clients' CPU and GIL are their own."""
    done = subprocess.run([sys.executable, __file__, "--load-only", base, str(clients), str(total)],
                          capture_output=True, text=True, timeout=600, check=True)
    measured = json.loads(done.stdout)
    return measured["elapsed"], measured["latencies"]


def bench_http(root: Path, total: int, levels: tuple[int, ...] = CONCURRENCY, profile: int = 0) -> None:
    server = ServerThread(root / "serve", profile=bool(profile))
    try:
        base = f"http://127.0.0.1:{server.port}"
        print(f"POST /v1/chat/completions, zero-latency provider, one turn per request (~{total} per level):")
        print(f"  {'clients':>7}  {'in':>14}  {'req/s':>8}  {'p50 ms':>8}  {'p99 ms':>8}  {'fsyncs/req':>10}")
        group = server.ctx.runtime.sessions.group
        for clients in levels:
            for where, run_load in (("own process", load_in_own_process),
                                    ("server's", lambda *a: asyncio.run(load(*a)))):
                fsyncs = group.fsyncs
                elapsed, latencies = run_load(base, clients, total)
                rate = len(latencies) / elapsed
                served = len(latencies) + max(1, total // clients)  # the warm-up requests fsync too
                print(f"  {clients:>7}  {where:>14}  {rate:>8.1f}  {percentile(latencies, 0.5) * 1000:>8.1f}  "
                      f"{percentile(latencies, 0.99) * 1000:>8.1f}  {(group.fsyncs - fsyncs) / served:>10.2f}")
    finally:
        server.stop()
    if server.profiler is not None:
        import pstats

        server.profiler.disable()
        stats = pstats.Stats(server.profiler)
        stats.strip_dirs()
        for order in ("tottime", "cumulative"):
            print(f"\nthe server's thread under cProfile, top {profile} by {order}:")
            stats.sort_stats(order).print_stats(profile)


async def sidecar_events(root: Path, reply_chars: int) -> tuple[int, int, float]:
    from atomic_agent.plugins.sidecar.protocol_router import handle_item
    from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
    from atomic_agent.plugins.sidecar.sidecar_server import SidecarServer

    read_fd, write_fd = os.pipe()
    counted = {"lines": 0, "bytes": 0}

    def drain() -> None:  # the host's side of the pipe
        with os.fdopen(read_fd, "rb") as pipe:
            for line in pipe:
                counted["lines"] += 1
                counted["bytes"] += len(line)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    sink = os.fdopen(write_fd, "wb")
    server = SidecarServer(ProtocolWriter(sink), working_dir=root)
    # one long reply: the provider streams its tool-call JSON in 7-character deltas, one event each
    provider = ScriptedProvider([calls(("reply", {"text": "x" * reply_chars}))])
    boot_context = boot(root / "sidecar", environ={}, host=fresh_plugin_host())
    runtime = await create_runtime(boot_context=boot_context, provider=provider, ask=server.approvals.ask)
    server.bind(runtime)
    before = counted["lines"]
    started = time.perf_counter()
    await handle_item(server, json.dumps({"id": 1, "type": "send_message", "text": "go"}).encode())
    await server.registry.wait_all()
    await server.shutdown()
    sink.close()
    reader.join(60)
    elapsed = time.perf_counter() - started
    return counted["lines"] - before, counted["bytes"], elapsed


def bench_sidecar(root: Path, events: int) -> None:
    lines, size, elapsed = asyncio.run(sidecar_events(root, events * 7))
    print(f"sidecar event throughput (one turn streaming {lines} protocol lines through a pipe):")
    print(f"  {lines / elapsed:,.0f} lines/s, {size / elapsed / 1e6:.1f} MB/s ({elapsed * 1000:.0f} ms in total)")


def main() -> None:
    if sys.argv[1:2] == ["--load-only"]:  # the clients' own process (load_in_own_process)
        base, clients, total = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        elapsed, latencies = asyncio.run(load(base, clients, total))
        print(json.dumps({"elapsed": elapsed, "latencies": latencies}))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300, help="requests per concurrency level")
    parser.add_argument("--events", type=int, default=20000, help="text_delta events in the sidecar run")
    parser.add_argument("--clients", default=",".join(map(str, CONCURRENCY)), help="concurrency levels")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="profile the server; print the top N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench_http(root, args.requests, tuple(int(c) for c in args.clients.split(",")), args.profile)
        bench_sidecar(root, args.events)


if __name__ == "__main__":
    main()
