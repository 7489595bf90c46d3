"""`<state>/metrics.json`: totals across runtimes, merged under a lock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from atomic_agent.plugins.metrics.metrics_file import clear_metrics, flush_metrics, metrics_path, read_metrics
from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry


def test_flush_adds_into_the_stored_totals(tmp_path: Path) -> None:
    for _ in range(2):
        reg = MetricsRegistry()
        reg.inc("agent.memory.reflection", outcome="ok")
        reg.observe("lat", 3)
        flush_metrics(reg, tmp_path)
    stored = MetricsRegistry()
    stored.merge_snapshot(read_metrics(tmp_path))
    assert stored.counter_value("agent.memory.reflection", outcome="ok") == 2
    assert stored.histogram("lat").count == 2  # type: ignore[union-attr]


def test_a_second_flush_of_the_same_registry_adds_nothing(tmp_path: Path) -> None:
    reg = MetricsRegistry()
    reg.inc("c", 5)
    flush_metrics(reg, tmp_path)
    flush_metrics(reg, tmp_path)
    assert read_metrics(tmp_path)["counters"][0]["value"] == 5


def test_concurrent_processes_do_not_lose_counts(tmp_path: Path) -> None:
    code = ("import sys; from pathlib import Path\n"
            "from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry\n"
            "from atomic_agent.plugins.metrics.metrics_file import flush_metrics\n"
            "for _ in range(20):\n"
            "    r = MetricsRegistry(); r.inc('c'); flush_metrics(r, Path(sys.argv[1]))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)]) for _ in range(3)]
    assert all(p.wait() == 0 for p in procs)
    assert read_metrics(tmp_path)["counters"][0]["value"] == 60


def test_unreadable_file_is_reported_then_replaced_by_the_next_flush(tmp_path: Path) -> None:
    metrics_path(tmp_path).write_text("{not json")
    try:
        read_metrics(tmp_path)
        raised = False
    except Exception as exc:
        raised = "delete it" in str(exc)
    assert raised
    reg = MetricsRegistry()
    reg.inc("c")
    flush_metrics(reg, tmp_path)
    assert json.loads(metrics_path(tmp_path).read_text())["counters"][0]["value"] == 1


def test_clear_removes_the_totals(tmp_path: Path) -> None:
    reg = MetricsRegistry()
    reg.inc("c")
    flush_metrics(reg, tmp_path)
    clear_metrics(tmp_path)
    assert read_metrics(tmp_path) == {"counters": [], "histograms": []}
