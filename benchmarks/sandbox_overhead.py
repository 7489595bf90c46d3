"""Per-call overhead of the shell sandbox: `os.shell.run` of a trivial program unboxed vs
inside bubblewrap (sandbox.mode auto, no network), and what opening a session's worktree costs.

Usage: .venv/bin/python benchmarks/sandbox_overhead.py [--calls N]
Prints milliseconds per call (median, p90) for each placement and the difference (the calls
alternate, so load on the machine falls on both alike); the
worktree lines time `open_worktree` on a small fresh repository and the end-of-turn notice
(the worktree's state at the turn's start and the diffstat at its end) for a turn that
changed one file and for one that changed nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from atomic_agent.plugins.os.shell.exec_config import ExecConfig
from atomic_agent.plugins.os.shell.shell_tool import run_shell
from atomic_agent.plugins.sandbox.sandbox_config import SandboxConfig
from atomic_agent.plugins.sandbox.session_worktree import discard_worktree, open_worktree
from atomic_agent.plugins.sandbox.shell_sandbox import BwrapSandbox
from atomic_agent.plugins.sandbox.worktree_notice import WorktreeNotices
from atomic_agent.testing.tool_context_kit import make_runtime_view, make_tool_context

PROGRAMS = (("true", []), ("ls", ["-la"]), ("echo hi > out.txt", []))


async def time_calls(ctx: Any, state: Path, sandbox: BwrapSandbox | None, cmd: str, args: list[str],
                     n: int) -> list[float]:
    config = ExecConfig()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = await run_shell({"cmd": cmd, "args": args}, ctx, config, state, sandbox)
        times.append((time.perf_counter() - start) * 1000)
        if result.status != "ok":
            raise SystemExit(f"{cmd}: {result.summary}")
        boxed = "sandbox" in result.details
        if boxed != (sandbox is not None):
            raise SystemExit(f"{cmd}: expected boxed={sandbox is not None}, got {boxed}")
    return times


def p90(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.9) - 1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=50)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        state, ws = root / "state", root / "ws"
        ws.mkdir()
        view = make_runtime_view(state)
        sandbox = BwrapSandbox(view, SandboxConfig(mode="auto"))
        problem = await sandbox.unavailable()
        if problem:
            raise SystemExit(problem)
        ctx = make_tool_context(ws, state_dir=state)
        print(f"os.shell.run per call, {n} calls each (ms; median / p90)")
        for cmd, args in PROGRAMS:
            await time_calls(ctx, state, None, cmd, args, 3)  # warm imports and caches
            plain: list[float] = []
            boxed: list[float] = []
            for _ in range(n):  # interleaved, so a busy moment on the machine hits both alike
                plain += await time_calls(ctx, state, None, cmd, args, 1)
                boxed += await time_calls(ctx, state, sandbox, cmd, args, 1)
            shown = " ".join([cmd, *args])
            print(f"  {shown:<20} unboxed {statistics.median(plain):6.1f} / {p90(plain):6.1f}   "
                  f"bwrap {statistics.median(boxed):6.1f} / {p90(boxed):6.1f}   "
                  f"overhead {statistics.median(boxed) - statistics.median(plain):+6.1f}")
        repo = root / "repo"
        repo.mkdir()
        for i in range(50):
            (repo / f"f{i}.txt").write_text(f"file {i}\n" * 20)
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@localhost", "-c", "commit.gpgsign=false"]
        subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
        subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-q", "-m", "start"], cwd=repo, check=True)
        opened = []
        for i in range(5):
            start = time.perf_counter()
            open_worktree(state, f"bench{i}", repo)
            opened.append((time.perf_counter() - start) * 1000)
            discard_worktree(state, f"bench{i}")
        print(f"open a session worktree (50-file repo): median {statistics.median(opened):.1f} ms over 5")
        record = open_worktree(state, "notice", repo)
        notices = WorktreeNotices(state)
        changed, unchanged = [], []
        for i in range(max(n, 3)):
            start = time.perf_counter()
            notices.turn_began("notice")
            (Path(record.worktree) / f"f{i % 50}.txt").write_text(f"edited {i}\n")
            if not notices.turn_ended("notice"):
                raise SystemExit("a turn that changed a file showed no notice")
            changed.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            notices.turn_began("notice")
            if notices.turn_ended("notice"):
                raise SystemExit("a turn that changed nothing showed a notice")
            unchanged.append((time.perf_counter() - start) * 1000)
        discard_worktree(state, "notice")
        print(f"end-of-turn worktree notice (50-file repo): changed a file {statistics.median(changed):.1f} ms, "
              f"changed nothing {statistics.median(unchanged):.1f} ms (median over {len(changed)})")


if __name__ == "__main__":
    asyncio.run(main())
