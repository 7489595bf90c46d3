"""A fleet of real `atomic-agent serve` processes on one PostgreSQL database, and the client
that loads it: the harness behind the fleet test (tests/plugins/postgresql) and the fleet
benchmark (benchmarks/serve_fleet.py).

Each serve process is a host of its own: its own state directory (nothing shared but the
database), its own port, the same model server (the scripted fake llama-server). The client
sends `per_session` messages to each of `sessions` sessions, all sessions at once; the
messages of one session go to the hosts in turn (message j of session s to host (s + j) mod
n), and message j is sent once message j - 1 is admitted (its turn row is in the database),
without waiting for its answer: several messages of one session wait in its lane at once, on
different hosts. Every request carries an Idempotency-Key; a request whose host died (the
connection failed) or was stopping (503) is sent again with the same key to the next live
host, as a client behind a load balancer would, until it gets its answer.

`check_fleet` reads the database afterwards and lists what is wrong: a message missing or
in the conversation twice, out of order in its session, without a reply after it, or a turn
still queued or running.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import attrs

API_KEY = "fleet-test-key-" + "0" * 24
AUTH = {"Authorization": f"Bearer {API_KEY}"}
WAIT_S = 120.0
ADMISSION_POLL_S = 0.01
RETRY_PAUSE_S = 0.2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@attrs.define
class Host:
    """One serve process of the fleet."""

    index: int
    port: int
    state: Path
    proc: subprocess.Popen[bytes]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def host_config(url: str, takeover_interval_s: int) -> dict[str, Any]:
    return {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]},
            "storage": {"url": url, "takeoverIntervalS": takeover_interval_s},
            "serve": {"shutdownGraceS": 5}}


def start_host(root: Path, index: int, url: str, password: str, llama_url: str, takeover_interval_s: int = 1) -> Host:
    """A serve process on a free loopback port, up and answering (its stderr in root/host-N.stderr)."""
    import httpx

    state = root / f"host-{index}"
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps(host_config(url, takeover_interval_s)))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env.update({"ATOMIC_AGENT_LLAMA_URL": llama_url, "ATOMIC_AGENT_API_KEY": API_KEY,
                "ATOMIC_AGENT_STORAGE_PASSWORD": password})
    with (root / f"host-{index}.stderr").open("ab") as stderr:
        proc = subprocess.Popen([str(Path(sys.executable).parent / "atomic-agent"), "--state-dir", str(state), "serve",
                                 "--port", str(port), "--cwd", str(root)], env=env, stdout=subprocess.DEVNULL,
                                stderr=stderr)
    host = Host(index, port, state, proc)
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve host {index} exited during start-up: "
                               + (root / f"host-{index}.stderr").read_text(errors="replace")[-2000:])
        try:
            if httpx.get(f"{host.base}/v1/models", headers=AUTH, timeout=1).status_code == 200:
                return host
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"serve host {index} did not come up in {WAIT_S:.0f} s")


def stop_host(host: Host) -> None:
    if host.proc.poll() is None:
        host.proc.send_signal(signal.SIGTERM)
        try:
            host.proc.wait(WAIT_S)
        except subprocess.TimeoutExpired:
            host.proc.kill()
            host.proc.wait(WAIT_S)


def message_text(session: int, j: int) -> str:
    return f"fleet message {j} of session {session}"


@attrs.define
class FleetRun:
    """What the client saw."""

    elapsed_s: float = 0.0
    answered: dict[str, int] = attrs.field(factory=dict)  # message text -> 200 answers its client got
    retries: int = 0  # requests sent again (same key) after their host died or was stopping
    refused: dict[str, int] = attrs.field(factory=dict)  # error code of a retryable refusal -> how many
    latencies_s: list[float] = attrs.field(factory=list)  # send to answer, retries included

    def percentile_ms(self, q: float) -> float:
        """The q-quantile (0..1) of the latencies, nearest rank, in milliseconds (0 with none)."""
        ordered = sorted(self.latencies_s)
        return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] * 1000 if ordered else 0.0

    def summary(self) -> str:
        """One line for a test's output or a report: throughput, latency quantiles, retries."""
        count = len(self.latencies_s)
        return (f"{count} answers in {self.elapsed_s:.1f} s ({count / max(self.elapsed_s, 1e-9):.1f} req/s), "
                f"p50 {self.percentile_ms(0.5):.0f} ms, p99 {self.percentile_ms(0.99):.0f} ms, "
                f"{self.retries} retries")


class AdmissionWatch:
    """Which of the fleet's messages have a turn row: one query for all waiting senders."""

    def __init__(self, conninfo: dict[str, Any]) -> None:
        self.conninfo = conninfo
        self.admitted: set[str] = set()
        self.waiting: dict[str, asyncio.Event] = {}
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> AdmissionWatch:
        import psycopg

        self.conn = await psycopg.AsyncConnection.connect(autocommit=True, **self.conninfo)
        self._task = asyncio.ensure_future(self._poll())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        await self.conn.close()

    async def _poll(self) -> None:
        import psycopg

        while True:
            if self.waiting:
                try:
                    rows = await (await self.conn.execute("select text from turns where text like 'fleet message %%'")
                                  ).fetchall()
                except psycopg.OperationalError:  # the server restarted under the run (the failover test)
                    await self._reconnect()
                    continue
                self.admitted.update(r[0] for r in rows)
                for text in [t for t in self.waiting if t in self.admitted]:
                    self.waiting.pop(text).set()
            await asyncio.sleep(ADMISSION_POLL_S)

    async def _reconnect(self) -> None:
        import psycopg

        await self.conn.close()
        while True:
            try:
                self.conn = await psycopg.AsyncConnection.connect(autocommit=True, **self.conninfo)
                return
            except psycopg.OperationalError:
                await asyncio.sleep(RETRY_PAUSE_S)

    async def admitted_(self, text: str) -> None:
        if text in self.admitted:
            return
        event = self.waiting.setdefault(text, asyncio.Event())
        await event.wait()


async def drive(hosts: list[Host], session_ids: list[str], per_session: int, conninfo: dict[str, Any],
                on_answer: Callable[[int], None] | None = None, timeout_s: float = WAIT_S,
                retryable: Collection[int] = (503,)) -> FleetRun:
    """Send every message (see the module docstring); returns when each has its answer
    (RuntimeError for one that has none within `timeout_s`, retries included, or for an answer
    whose status is neither 200 nor `retryable`)."""
    import httpx

    run = FleetRun()
    dead: set[int] = set()
    limits = httpx.Limits(max_connections=len(session_ids) * per_session + 10, max_keepalive_connections=50)

    async with httpx.AsyncClient(timeout=timeout_s, limits=limits, headers=AUTH) as client, \
            AdmissionWatch(conninfo) as watch:

        async def request(s: int, j: int) -> None:
            text, key = message_text(s, j), f"fleet-{s}-{j}"
            body = {"model": "atomic-agent", "messages": [{"role": "user", "content": text}]}
            began = time.perf_counter()
            target = (s + j) % len(hosts)
            deadline = time.monotonic() + timeout_s
            while True:
                while target in dead or hosts[target].proc.poll() is not None:
                    dead.add(target)
                    target = (target + 1) % len(hosts)
                try:
                    response = await client.post(f"{hosts[target].base}/v1/chat/completions", json=body,
                                                 headers={"Idempotency-Key": key, "X-Atomic-Session": session_ids[s]})
                    if response.status_code == 200:
                        break
                    if response.status_code not in retryable:
                        raise RuntimeError(f"{text!r} on host {target}: {response.status_code} {response.text}")
                    code = str((response.json().get("error") or {}).get("code"))
                    run.refused[code] = run.refused.get(code, 0) + 1
                except httpx.TransportError:
                    if hosts[target].proc.poll() is not None:
                        dead.add(target)
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{text!r} got no answer in {timeout_s:.0f} s")
                run.retries += 1
                target = (target + 1) % len(hosts)
                await asyncio.sleep(RETRY_PAUSE_S)
            run.latencies_s.append(time.perf_counter() - began)
            run.answered[text] = run.answered.get(text, 0) + 1
            if on_answer is not None:
                on_answer(len(run.latencies_s))

        async def session(s: int) -> list[asyncio.Task[None]]:
            sent = []
            for j in range(per_session):
                sent.append(asyncio.ensure_future(request(s, j)))
                await watch.admitted_(message_text(s, j))  # FIFO is only defined for what was admitted in order
            return sent

        began = time.perf_counter()
        lanes = await asyncio.gather(*(session(s) for s in range(len(session_ids))))
        await asyncio.gather(*(t for lane in lanes for t in lane))
        run.elapsed_s = time.perf_counter() - began
    return run


def create_sessions(host: Host, count: int) -> list[str]:
    import httpx

    return [httpx.post(f"{host.base}/api/sessions", json={}, headers=AUTH, timeout=WAIT_S).json()["id"]
            for _ in range(count)]


def check_fleet(conninfo: dict[str, Any], session_ids: list[str], per_session: int) -> list[str]:
    """Problems in the database after a run (empty: every message once, in order, answered)."""
    import psycopg

    problems: list[str] = []
    with psycopg.connect(autocommit=True, **conninfo) as conn:
        for s, session_id in enumerate(session_ids):
            rows = conn.execute("select kind, text from transcript where session_id = %s order by seq",
                                [session_id]).fetchall()
            users = [text for kind, text in rows if kind == "user"]
            expected = [message_text(s, j) for j in range(per_session)]
            if users != expected:
                problems.append(f"session {s}: the user messages are {users}, expected {expected} (each once, in "
                                "the order they were admitted)")
            last_user = max((i for i, (kind, _) in enumerate(rows) if kind == "user"), default=-1)
            if not any(kind == "assistant_reply" for kind, _ in rows[last_user + 1:]):
                # a reply answers every message before it (an interrupted one's too: the next turn
                # answers the durable conversation, its message and failure note included)
                problems.append(f"session {s}: no reply after its last message")
        live = conn.execute("select text, state from turns where state in ('queued', 'running')").fetchall()
        problems += [f"turn for {text!r} is still {state}" for text, state in live]
    return problems
