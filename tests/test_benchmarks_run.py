"""Every benchmark script that needs no llama-server still runs (tiny sizes): a benchmark
that rots silently is worse than none. Numbers are printed, never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"

SMALL_RUNS = {
    "fs_read_batch.py": ["--lines", "200", "--rounds", "1"],
    "fallback_overhead.py": ["--calls", "50"],
    "mcp_client.py": ["--servers", "1", "--calls", "5"],
    "turn_admission.py": ["--admissions", "20", "--sessions", "3", "--steers-per-session", "2"],
    "security_checks.py": ["--rounds", "20"],
    "lesson_paths.py": ["--rows", "200", "--lessons", "20"],
    "telegram_channel.py": ["--messages", "3", "--megabytes", "0.1"],
    "task_scheduler.py": ["--pending", "200", "--due", "3"],
    "session_turn_cost.py": ["--checkpoints", "1,3", "--window", "1"],
    "serve_throughput.py": ["--requests", "6", "--clients", "1,2", "--events", "20"],
    "operator_tasks.py": ["--scripted", "--only", "summarise_log", "--only", "schedule_reminder"],
    "skills_prompt_tokens.py": [],
    "storage_backends.py": ["--turns", "6", "--clients", "1,2"],  # starts a real PostgreSQL (a few seconds)
    "serve_fleet.py": ["--sessions", "3", "--per-session", "2", "--hosts", "1,2"],  # PostgreSQL and serve processes
    "approval_wakeups.py": ["--waiters", "3", "--idle-s", "0.3"],  # a real PostgreSQL
    "sandbox_overhead.py": ["--calls", "3"],
    "browser_snapshot.py": ["--rows", "50", "--sections", "5", "--rounds", "1"],
}


@pytest.mark.parametrize("script", sorted(SMALL_RUNS))
def test_benchmark_script_runs_and_prints_numbers(script: str) -> None:
    ran = subprocess.run([sys.executable, str(BENCHMARKS / script), *SMALL_RUNS[script]], capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert any(ch.isdigit() for ch in ran.stdout)
