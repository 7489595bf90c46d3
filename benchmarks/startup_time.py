"""Median cold start of `atomic-agent --help` and `atomic-agent plugins` (separate processes).

Usage: .venv/bin/python benchmarks/startup_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = Path(sys.executable).with_name("atomic-agent")


def time_command(args: list[str], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([str(CLI), *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as state:
        time_command(["--state-dir", state, "--help"], 2)  # warm the OS file cache once
        for label, args in (("--help", ["--state-dir", state, "--help"]), ("plugins", ["--state-dir", state, "plugins"])):
            samples = time_command(args, runs)
            print(f"atomic-agent {label:<8} median {statistics.median(samples):6.1f} ms   "
                  f"min {min(samples):6.1f}   max {max(samples):6.1f}   (n={runs})")


if __name__ == "__main__":
    main()
