"""Fleet throughput: 1, 2 and 3 real `atomic-agent serve` processes on one PostgreSQL (a
local server with fsync on, started here as the test fixture starts it), each with a state
directory of its own, answering interleaved requests across many sessions.

The harness is the fleet test's (atomic_agent.plugins.postgresql.testing.serve_fleet): the
messages of one session go to the hosts in turn and wait in its lane at once (message j is
sent when message j - 1 is admitted), so a session's turns run FIFO across processes while
independent sessions run in parallel. The model is the scripted fake llama-server answering
at once: the numbers are the fleet's (HTTP, admission, lanes across processes, durable
commits), not a model's. Each fleet size runs twice: undisturbed, and with one host SIGKILLed
a quarter of the way through (its clients send again, same Idempotency-Key, to a live host;
a live host's fleet_takeover tick adopts what the dead one had admitted). After each run the
database is checked: every message in its session once, in admission order, answered.

On 2 cores shared with the client and PostgreSQL, more processes cannot add CPU: the figures
show what lanes across processes cost, not how a fleet on several machines scales.

Usage: .venv/bin/python benchmarks/serve_fleet.py [--sessions 50] [--per-session 20] [--hosts 1,2,3] [--no-kill]
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import tempfile
import uuid
from pathlib import Path

import psycopg

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.plugins.postgresql.database_url import DatabaseUrl
from atomic_agent.plugins.postgresql.testing.pg_server import PostgresServer, benchmark_postgres
from atomic_agent.plugins.postgresql.testing.serve_fleet import (
    check_fleet,
    create_sessions,
    drive,
    start_host,
    stop_host,
)

REQUEST_TIMEOUT_S = 900.0  # every message of every session is in flight at once: the last wait long


def one_run(server: PostgresServer, fake: FakeLlamaServer, root: Path, hosts: int, sessions: int, per_session: int,
            kill: bool) -> None:
    name = "fleet_" + uuid.uuid4().hex[:12]
    with psycopg.connect(server.url(), password=server.password, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    conninfo = DatabaseUrl("agent", "127.0.0.1", server.port, name, server.password).connect_kwargs(10)
    where = root / name
    fleet = [start_host(where, i, server.url(name), server.password, fake.base_url) for i in range(hosts)]
    victim = fleet[hosts // 2]
    total = sessions * per_session

    def kill_mid_run(answered: int) -> None:
        if kill and answered == total // 4 and victim.proc.poll() is None:
            victim.proc.send_signal(signal.SIGKILL)

    try:
        session_ids = create_sessions(fleet[0], sessions)
        run = asyncio.run(drive(fleet, session_ids, per_session, conninfo, on_answer=kill_mid_run,
                                timeout_s=REQUEST_TIMEOUT_S))
    finally:
        for host in fleet:
            stop_host(host)
    problems = check_fleet(conninfo, session_ids, per_session)
    doubled = sum(1 for n in run.answered.values() if n != 1)
    what = f"kill host {victim.index}" if kill else "undisturbed"
    print(f"  {hosts:>5}  {what:>13}  {total:>8}  {total / run.elapsed_s:>8.1f}  "
          f"{run.percentile_ms(0.5):>8.1f}  {run.percentile_ms(0.99):>8.1f}  "
          f"{run.retries:>7}  {'ok' if not problems and not doubled else f'{len(problems) + doubled} PROBLEMS'}",
          flush=True)
    for problem in problems[:10]:
        print(f"      {problem}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--per-session", type=int, default=20, help="messages per session (50 x 20 = 1,000)")
    parser.add_argument("--hosts", default="1,2,3")
    parser.add_argument("--no-kill", action="store_true", help="skip the runs that SIGKILL a host")
    args = parser.parse_args()
    with benchmark_postgres() as server:
        if server is not None:
            run_all(server, args)


def run_all(server: PostgresServer, args: argparse.Namespace) -> None:
    print(f"{args.sessions} sessions x {args.per_session} messages, interleaved over the hosts; zero-latency model; "
          "PostgreSQL with fsync on")
    print(f"  {'hosts':>5}  {'run':>13}  {'requests':>8}  {'req/s':>8}  {'p50 ms':>8}  {'p99 ms':>8}  "
          f"{'retries':>7}  check")
    with FakeLlamaServer(total_slots=8) as fake, tempfile.TemporaryDirectory() as tmp:
        for hosts in (int(h) for h in args.hosts.split(",")):
            one_run(server, fake, Path(tmp), hosts, args.sessions, args.per_session, kill=False)
            if hosts > 1 and not args.no_kill:
                one_run(server, fake, Path(tmp), hosts, args.sessions, args.per_session, kill=True)


if __name__ == "__main__":
    main()
