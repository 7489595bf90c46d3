"""Prometheus text exposition of a snapshot."""

from __future__ import annotations

from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry
from atomic_agent.plugins.metrics.prometheus_text import prometheus_name, render_prometheus


def test_counter_names_become_underscored_totals_with_sorted_labels() -> None:
    reg = MetricsRegistry()
    reg.inc("agent.memory.reflection", 2, outcome="ok", b_tag="1")
    text = render_prometheus(reg.snapshot())
    assert "# TYPE agent_memory_reflection_total counter\n" in text
    assert 'agent_memory_reflection_total{b_tag="1",outcome="ok"} 2\n' in text


def test_histograms_have_cumulative_buckets_inf_sum_and_count() -> None:
    reg = MetricsRegistry()
    for v in (1, 4, 100):
        reg.observe("agent.memory.reflection.latency_ms", v, buckets=(2, 10), outcome="ok")
    text = render_prometheus(reg.snapshot())
    assert 'agent_memory_reflection_latency_ms_bucket{outcome="ok",le="2"} 1' in text
    assert 'agent_memory_reflection_latency_ms_bucket{outcome="ok",le="10"} 2' in text
    assert 'agent_memory_reflection_latency_ms_bucket{outcome="ok",le="+Inf"} 3' in text
    assert 'agent_memory_reflection_latency_ms_sum{outcome="ok"} 105' in text
    assert 'agent_memory_reflection_latency_ms_count{outcome="ok"} 3' in text


def test_label_values_are_escaped_and_bad_name_characters_replaced() -> None:
    reg = MetricsRegistry()
    reg.inc("a-b.c", why='say "hi"\nback\\slash')
    text = render_prometheus(reg.snapshot())
    assert 'a_b_c_total{why="say \\"hi\\"\\nback\\\\slash"} 1' in text
    assert prometheus_name("9lives") == "_9lives"


def test_empty_snapshot_renders_nothing() -> None:
    assert render_prometheus({"counters": [], "histograms": []}) == ""
