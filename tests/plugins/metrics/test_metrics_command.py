"""`atomic-agent metrics`: the totals runtimes saved, as JSON or Prometheus text."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugins.metrics.metrics_file import flush_metrics, metrics_path
from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry
from tests.plugins.memory.cli_harness import run_cli


def seed(state: Path) -> None:
    reg = MetricsRegistry()
    reg.inc("agent.memory.reflection", 2, outcome="ok")
    reg.observe("agent.memory.reflection.latency_ms", 120, outcome="ok")
    flush_metrics(reg, state)


def test_json_is_the_default(tmp_path: Path) -> None:
    seed(tmp_path)
    body = run_cli(tmp_path, "metrics").json()
    assert body["counters"] == [{"name": "agent.memory.reflection", "tags": {"outcome": "ok"}, "value": 2}]
    assert body["histograms"][0]["count"] == 1


def test_prometheus_text(tmp_path: Path) -> None:
    seed(tmp_path)
    out = run_cli(tmp_path, "metrics", "--format", "prometheus").out
    assert 'agent_memory_reflection_total{outcome="ok"} 2' in out
    assert 'agent_memory_reflection_latency_ms_count{outcome="ok"} 1' in out


def test_reset_and_bad_format(tmp_path: Path) -> None:
    seed(tmp_path)
    assert run_cli(tmp_path, "metrics", "--format", "xml").code == 2
    assert run_cli(tmp_path, "metrics", "--reset").code == 0
    assert not metrics_path(tmp_path).exists()
    assert run_cli(tmp_path, "metrics").json() == {"counters": [], "histograms": []}


async def test_a_closed_runtime_saves_its_metrics_for_the_command(tmp_path: Path) -> None:
    from atomic_agent.testing.scripted_provider import calls
    from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime
    from tests.plugins.memory_plugins.routing_provider import RoutingProvider

    runtime = make_memory_runtime(tmp_path, RoutingProvider([calls(("reply", {"text": "hi"}))], "NONE"))
    await runtime.run_turn("hello", working_dir=tmp_path)
    await runtime.close()
    body = run_cli(tmp_path, "metrics").json()
    assert {"name": "agent.memory.reflection", "tags": {"outcome": "none"}, "value": 1} in body["counters"]
