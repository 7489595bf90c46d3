"""What the security checks add: per tool call and per `serve` request (median µs).

Per tool call, each check is timed on its own, in-process, on real files in a temp dir:
- shell guard: `judge()` on a mix of everyday command lines (parse, expand, unwrap, rules,
  and where each word lands against the runtime's secrets);
- read guard: `check_readable` + the credential-store lookup for a workspace file, and for a
  file with two hard links (the inode index lookup);
- write funnel: `classify_fs_mutation` with the persistence-spot names;
- egress: `admit_egress` for an allowlisted host;
- git: listing the repository's config once per git tool call (a subprocess, so in ms).

Per serve request: one `GET /v1/models` through the ASGI app in-process with and without the
request guard, and the caller/approval-binding lookup of `GET /api/approvals`.

Usage: .venv/bin/python benchmarks/security_checks.py [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

LINES = ["ls -la", "git status", "make -j2 && make test", "python3 -m pytest -q tests", "rm -rf build dist",
         "grep -rn TODO src | head -20", "cd src && ls", "for f in *.txt; do wc -l $f; done",
         "curl -s https://example.com -o page.html", "tar czf out.tgz src"]


def median_us(fn: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        fn()
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def tool_checks(root: Path, rounds: int) -> dict[str, float]:
    from atomic_agent.plugins.os.fs.read_guard import check_readable, sensitive_store
    from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import classify_fs_mutation
    from atomic_agent.plugins.os.shell.exec_config import ExecConfig, tool_environment
    from atomic_agent.plugins.os.shell.shell_interpretation import plan_exec
    from atomic_agent.plugins.os.shell.shell_tool import judge

    ws = root / "ws"
    ws.mkdir()
    state = root / "state"
    state.mkdir()
    (state / ".env").write_text("KEY=x\n")
    plain = ws / "notes.txt"
    plain.write_text("hello\n")
    linked = ws / "linked.txt"
    linked.write_text("two links\n")
    os.link(linked, ws / "linked-too.txt")
    trust = (state / "config.json", state / ".env")
    env = tool_environment(ExecConfig())
    plans = [plan_exec(line, ()) for line in LINES]
    extra: tuple[Any, ...] = ()
    try:  # the runtime's secret paths, as the tool passes them (runtimes before issue 29 take none)
        from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_roots

        extra = (secret_roots([state]),)
    except ImportError:
        pass

    def shell() -> None:
        for plan in plans:
            judge(plan, ws, ws, env, *extra)

    results = {"shell guard (judge, per command)": median_us(shell, rounds) / len(plans)}
    results["read guard (regular file)"] = median_us(
        lambda: (check_readable(plain, "notes.txt", trust), sensitive_store(plain)), rounds)
    results["read guard (hard-linked file, inode index)"] = median_us(
        lambda: sensitive_store(linked, os.stat(linked)), rounds)
    results["write funnel (classify + persistence names)"] = median_us(
        lambda: classify_fs_mutation("write", [ws / "src" / "main.py"], ws, trust, state_dirs=[state]), rounds)
    results["write funnel (whole classification)"] = results.pop("write funnel (classify + persistence names)")
    results["egress policy (allowlisted host)"] = asyncio.run(_egress(rounds))
    return results


async def _egress(rounds: int) -> float:
    from atomic_agent.api import make_tool_context
    from atomic_agent.plugins.os.http.egress_policy import admit_egress
    from atomic_agent.plugins.os.http.http_config import HttpConfig

    ctx = make_tool_context(Path("/tmp"))
    config = HttpConfig(approval_mode="allowlist", allowed_hosts=("api.example.com",))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        await admit_egress(ctx, "os.web.fetch", "GET", "https://api.example.com/x", "api.example.com", config)
        samples.append((time.perf_counter_ns() - start) / 1000)
    return statistics.median(samples)


def git_listing_ms(root: Path, rounds: int) -> float | None:
    from atomic_agent.plugins.os.git.git_runner import git_environment
    from atomic_agent.plugins.os.shell.exec_config import ExecConfig

    repo = root / "repo"
    repo.mkdir()
    try:
        subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return median_us(lambda: asyncio.run(git_environment(repo, ExecConfig())), max(5, rounds // 50)) / 1000


def serve_checks(root: Path, rounds: int) -> dict[str, float]:
    from atomic_agent.plugins.serve.client_identity import Caller, may_answer
    from atomic_agent.plugins.serve.origin_policy import OriginPolicy
    from atomic_agent.plugins.serve.request_guard import RequestGuard

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b"{}"})

    guarded = RequestGuard(app, OriginPolicy.of((), (), keyed=False))
    scope = {"type": "http", "method": "POST", "path": "/v1/chat/completions",
             "headers": [(b"host", b"127.0.0.1:8765"), (b"content-type", b"application/json"),
                         (b"content-length", b"2"), (b"origin", b"http://127.0.0.1:8765")]}

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(_message: dict[str, Any]) -> None:
        return None

    async def many(target: Any, count: int) -> list[float]:
        samples = []
        for _ in range(count):
            start = time.perf_counter_ns()
            await target(scope, receive, send)
            samples.append((time.perf_counter_ns() - start) / 1000)
        return samples

    bare = statistics.median(asyncio.run(many(app, rounds)))
    with_guard = statistics.median(asyncio.run(many(guarded, rounds)))

    class Ctx:
        turns: dict[str, Any] = {}

    event = {"type": "approval_request", "turnId": "t1"}
    binding = median_us(lambda: may_answer(Caller("client-0123456789abcdef", False), Ctx(), event), rounds)
    return {"request guard (Host, Origin, body type)": max(0.0, with_guard - bare),
            "approval binding (per pending approval)": binding}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("added cost per tool call (median µs):")
        for name, value in tool_checks(root, args.rounds).items():
            print(f"  {name:<48} {value:9.1f}")
        listing = git_listing_ms(root, args.rounds)
        if listing is not None:
            print(f"  {'git config listing (per git tool call, ms)':<48} {listing:9.2f}")
        print("added cost per serve request (median µs):")
        for name, value in serve_checks(root, args.rounds).items():
            print(f"  {name:<48} {value:9.1f}")


if __name__ == "__main__":
    main()
