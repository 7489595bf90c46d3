"""`serve`'s resident memory per request: the RSS of a real `atomic-agent serve` process after
1k, 10k and 50k chat completions (it once grew ~4-5 KB per request without levelling off).

Usage: .venv/bin/python benchmarks/serve_memory.py [--checkpoints 1000,10000,50000] [--clients 4]
                                                   [--same-session | --sessions N] [--disable PLUGIN,...]

The server runs with the default plugins (memory phases included) against a scripted
llama-server on loopback; its state dir lives on /dev/shm when there is one, so the disk is
not what is measured. Every request starts a new session unless --same-session (then one
session's conversation grows, which is expected to cost memory in its prompt), or
--sessions N (requests go round-robin over N sessions made up front). RSS is read from
/proc/<pid>/status, the open file descriptors from /proc/<pid>/fd and the connections to the
llama-server from /proc/net/tcp; the numbers are
printed, never asserted. --disable names plugins to switch off (config plugins.disabled).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from atomic_agent.plugins.llama_server.testing.connection_count import open_connections
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer

CLI = Path(sys.executable).with_name("atomic-agent")
REPLY = json.dumps([{"tool": "reply", "args": {"text": "ok"}}])


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS line")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def start(state: Path, port: int, llama_url: str, disabled: list[str]) -> subprocess.Popen[bytes]:
    if disabled:
        state.mkdir(parents=True, exist_ok=True)
        (state / "config.json").write_text(json.dumps({"plugins": {"disabled": disabled}}))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}
    env.update(ATOMIC_AGENT_LLAMA_URL=llama_url)
    proc = subprocess.Popen([str(CLI), "--state-dir", str(state), "serve", "--port", str(port), "--cwd", str(state)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            return proc
        except httpx.TransportError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("serve did not come up")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoints", default="1000,10000,50000")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--same-session", action="store_true")
    parser.add_argument("--sessions", type=int, default=0, help="round-robin over this many sessions")
    parser.add_argument("--disable", default="", help="plugins to disable, comma-separated")
    args = parser.parse_args()
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    scratch = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="serve-memory-", dir=scratch) as tmp, \
            FakeLlamaServer(default_reply=REPLY) as fake:
        state = Path(tmp) / "state"
        port = free_port()
        proc = start(state, port, fake.base_url, [p for p in args.disable.split(",") if p])
        base = f"http://127.0.0.1:{port}"
        # serve generated its API key on this first start (kept 0600 in the state dir)
        auth = {"Authorization": f"Bearer {(state / 'serve' / 'api-key').read_text().strip()}"}
        session = httpx.post(f"{base}/api/sessions", json={}, headers=auth).json()["id"] if args.same_session else None
        pool = [httpx.post(f"{base}/api/sessions", json={}, headers=auth).json()["id"] for _ in range(args.sessions)]
        done = 0
        lock = threading.Lock()
        started = time.perf_counter()
        shape = ("one session" if session else f"{len(pool)} sessions round-robin" if pool
                 else "a new session per request")
        print(f"serve pid {proc.pid}: RSS {rss_kib(proc.pid):,} KiB, {open_fds(proc.pid)} fds at start "
              f"({shape}, {args.clients} clients)")
        try:
            previous = (0, rss_kib(proc.pid))
            for target in checkpoints:
                def client(goal: int) -> None:
                    nonlocal done
                    headers = {"X-Atomic-Session": session} if session else {}
                    body = {"model": "atomic-agent", "messages": [{"role": "user", "content": "ping"}]}
                    with httpx.Client(base_url=base, timeout=60, headers=auth) as http:
                        while True:
                            with lock:
                                if done >= goal:
                                    return
                                done += 1
                                turn = done
                            if pool:
                                headers = {"X-Atomic-Session": pool[turn % len(pool)]}
                            response = http.post("/v1/chat/completions", json=body, headers=headers)
                            response.raise_for_status()

                threads = [threading.Thread(target=client, args=(target,)) for _ in range(args.clients)]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                fake.requests.clear()  # the scripted server's own log, in this process: not serve's memory
                rss = rss_kib(proc.pid)
                per = (rss - previous[1]) * 1024 / max(target - previous[0], 1)
                print(f"after {target:>6,} requests: RSS {rss:>9,} KiB, {open_fds(proc.pid):>4} fds, "
                      f"{open_connections(proc.pid, fake.port):>3} llama-server connections  "
                      f"({per:+.0f} B/request since the last line, "
                      f"{time.perf_counter() - started:,.0f} s elapsed)", flush=True)
                previous = (target, rss)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)


if __name__ == "__main__":
    main()
