"""The in-process registry: counters and histograms keyed by name and tags."""

from __future__ import annotations

import math

from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry


def test_counters_are_kept_per_tag_combination_and_summed_by_name() -> None:
    reg = MetricsRegistry()
    reg.inc("agent.memory.reflection", outcome="ok")
    reg.inc("agent.memory.reflection", outcome="ok")
    reg.inc("agent.memory.reflection", outcome="timeout")
    reg.inc("agent.memory.notes.evicted", 7)
    assert reg.counter_value("agent.memory.reflection", outcome="ok") == 2
    assert reg.counter_value("agent.memory.reflection", outcome="none") == 0
    assert reg.counter_total("agent.memory.reflection") == 3
    assert reg.counter_value("agent.memory.notes.evicted") == 7


def test_tag_order_does_not_split_a_series() -> None:
    reg = MetricsRegistry()
    reg.inc("x", a=1, b=2)
    reg.inc("x", b=2, a=1)
    assert reg.counter_value("x", a="1", b="2") == 2


def test_histogram_buckets_count_and_sum_and_quantile_upper_bound() -> None:
    reg = MetricsRegistry()
    for value in (0.5, 3, 3, 40, 70000):
        reg.observe("lat", value, buckets=(1, 5, 50))
    hist = reg.histogram("lat")
    assert hist is not None
    assert hist.counts == [1, 2, 1, 1]
    assert (hist.count, hist.total) == (5, 0.5 + 3 + 3 + 40 + 70000)
    assert hist.quantile(0.5) == 5
    assert hist.quantile(1.0) == math.inf


def test_snapshot_is_sorted_so_equal_registries_dump_equal() -> None:
    a, b = MetricsRegistry(), MetricsRegistry()
    a.inc("b", k="2")
    a.inc("a")
    b.inc("a")
    b.inc("b", k="2")
    assert a.snapshot() == b.snapshot()
    assert [c["name"] for c in a.snapshot()["counters"]] == ["a", "b"]


def test_merge_snapshot_adds_counters_and_histograms_with_same_bounds() -> None:
    a, b = MetricsRegistry(), MetricsRegistry()
    a.inc("c", 2, t="x")
    a.observe("h", 3, buckets=(1, 5))
    b.inc("c", 5, t="x")
    b.observe("h", 7, buckets=(1, 5))
    b.observe("h", 9, buckets=(10,), other="bounds")
    a.merge_snapshot(b.snapshot())
    assert a.counter_value("c", t="x") == 7
    hist = a.histogram("h")
    assert hist is not None and hist.counts == [0, 1, 1] and hist.count == 2


def test_drain_delta_never_reports_a_value_twice() -> None:
    reg = MetricsRegistry()
    reg.inc("c", 3)
    reg.observe("h", 2)
    first = reg.drain_delta()
    assert first["counters"][0]["value"] == 3 and first["histograms"][0]["count"] == 1
    assert reg.drain_delta() == {"counters": [], "histograms": []}
    reg.inc("c")
    assert reg.drain_delta()["counters"] == [{"name": "c", "tags": {}, "value": 1}]
    assert reg.counter_value("c") == 4  # the registry itself keeps its totals
