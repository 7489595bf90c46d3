"""Cold start of the CLI beside Python's own floor, from the same venv, as ratios.

Figures (medians over --runs separate processes):
  python -c pass                       the floor: this venv's interpreter start
  atomic-agent --help                  compose every plugin's commands and print the help
  atomic-agent plugins                 load every plugin and list it
  atomic-agent run hi -> /completion   process start to the first completion request the
                                       scripted llama-server (FakeLlamaServer) receives; a
                                       fresh state dir every run
    ... in a used state dir            the same, in one state dir that has run before

With --where, each command runs once more under `python -X importtime` and the modules that
cost the most (cumulative, top level) are printed: where the start-up time goes.

The children run with bytecode caching on, as an installed atomic-agent does (a
PYTHONDONTWRITEBYTECODE inherited from a sandbox would make every start compile the
sources); --no-bytecode-cache keeps the inherited setting.

Usage: .venv/bin/python benchmarks/startup_time.py [--runs N] [--where] [--no-bytecode-cache]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

CLI = Path(sys.executable).with_name("atomic-agent")


def timed(argv: Sequence[str], env: Mapping[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(env), check=True)
    return (time.perf_counter() - started) * 1000


def to_first_completion(state: Path, env: Mapping[str, str], python: Sequence[str] = ()) -> tuple[float, str]:
    """ms from process start to the first /completion request, and the run's stderr."""
    from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer

    with FakeLlamaServer() as fake:
        started = time.time()
        done = subprocess.run([*python, str(CLI), "--state-dir", str(state), "run", "hi"], capture_output=True,
                              text=True, env={**env, "ATOMIC_AGENT_LLAMA_URL": fake.base_url}, timeout=120)
        first = next((r for r in fake.requests if r.path == "/completion"), None)
        if first is None:
            raise RuntimeError(f"`atomic-agent run` sent no completion request: {done.stderr[-500:]}")
        return (first.received_at - started) * 1000, done.stderr


def median_of(sample: Callable[[int], float], runs: int) -> list[float]:
    sample(-1)  # warm the OS file cache (and the bytecode cache) once
    return [sample(i) for i in range(runs)]


def where_time_goes(stderr: str, top: int = 12) -> list[tuple[float, str]]:
    """(cumulative ms, module) of the top-level imports in `python -X importtime` output."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if not name.startswith(" ") or name.startswith("  "):
            continue  # nested imports are inside their parent's cumulative time
        rows.append((int(cumulative) / 1000, name.strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--where", action="store_true", help="print the costliest imports of each command")
    parser.add_argument("--no-bytecode-cache", action="store_true", help="keep an inherited PYTHONDONTWRITEBYTECODE")
    args = parser.parse_args()
    env = dict(os.environ)
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"bytecode cache: {'as inherited' if args.no_bytecode_cache else 'on'}; n={args.runs} per figure")
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        floor = median_of(lambda i: timed([sys.executable, "-c", "pass"], env), args.runs)
        figures = {
            "python -c pass": floor,
            "atomic-agent --help": median_of(lambda i: timed([str(CLI), "--state-dir", str(state / "s"), "--help"],
                                                             env), args.runs),
            "atomic-agent plugins": median_of(lambda i: timed([str(CLI), "--state-dir", str(state / "s"), "plugins"],
                                                              env), args.runs),
            "atomic-agent run -> /completion": median_of(lambda i: to_first_completion(state / f"run{i}", env)[0],
                                                         args.runs),
            # the everyday case: a state dir that has run before (its compiled templates kept)
            "  ... in a used state dir": median_of(lambda i: to_first_completion(state / "used", env)[0], args.runs),
        }
        base = statistics.median(floor)
        for label, samples in figures.items():
            med = statistics.median(samples)
            print(f"{label:<32} median {med:7.1f} ms  = {med / base:5.2f}x python  "
                  f"(min {min(samples):6.1f}, max {max(samples):6.1f})")
        if args.where:
            python = [sys.executable, "-X", "importtime"]
            helped = subprocess.run([*python, str(CLI), "--state-dir", str(state / "s"), "--help"],
                                    capture_output=True, text=True, env=env)
            _, ran = to_first_completion(state / "where", env, python)
            for label, stderr in (("--help", helped.stderr), ("run", ran)):
                print(f"\nwhere `{label}` spends its imports (top level, cumulative, under -X importtime):")
                for ms, name in where_time_goes(stderr):
                    print(f"  {ms:7.1f} ms  {name}")


if __name__ == "__main__":
    main()
