"""Counters and histograms keyed by (name, tags), kept in memory for one runtime.

Names are dotted (`agent.memory.reflection`); tags are short string labels. The registry
never raises on a bad tag value: it is stringified, because observability must never fail
the code it observes.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

# milliseconds: from sub-ms SQLite reads up to minute-long LLM sub-calls
DEFAULT_BUCKETS_MS: tuple[float, ...] = (1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)

TagKey = tuple[tuple[str, str], ...]


def tag_key(tags: Mapping[str, Any]) -> TagKey:
    return tuple(sorted((str(k), str(v)) for k, v in tags.items()))


@attrs.define
class Histogram:
    """Cumulative-free bucket counts (`counts[i]` = observations <= bounds[i], not cumulative);
    the last slot counts values above every bound."""

    bounds: tuple[float, ...]
    counts: list[int]
    count: int = 0
    total: float = 0.0

    @classmethod
    def empty(cls, bounds: Sequence[float]) -> Histogram:
        return cls(tuple(bounds), [0] * (len(bounds) + 1))

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.count += 1
        self.total += value

    def quantile(self, q: float) -> float | None:
        """An upper-bound estimate: the bound of the bucket holding the q-th observation."""
        if self.count == 0:
            return None
        rank = max(1, math.ceil(q * self.count))
        seen = 0
        for i, n in enumerate(self.counts):
            seen += n
            if seen >= rank:
                return self.bounds[i] if i < len(self.bounds) else math.inf
        return math.inf


class MetricsRegistry:
    """One runtime's metrics. `inc` for counters, `observe` for histograms."""

    def __init__(self) -> None:
        self._counters: dict[tuple[str, TagKey], float] = {}
        self._histograms: dict[tuple[str, TagKey], Histogram] = {}
        self._drained: dict[str, Any] = {"counters": {}, "histograms": {}}

    def inc(self, name: str, value: float = 1, **tags: Any) -> None:
        key = (name, tag_key(tags))
        self._counters[key] = self._counters.get(key, 0) + value

    def observe(self, name: str, value: float, buckets: Sequence[float] = DEFAULT_BUCKETS_MS, **tags: Any) -> None:
        key = (name, tag_key(tags))
        hist = self._histograms.get(key)
        if hist is None:
            hist = self._histograms[key] = Histogram.empty(buckets)
        hist.observe(float(value))

    def counter_value(self, name: str, **tags: Any) -> float:
        """The counter for exactly these tags (0 when never incremented)."""
        return self._counters.get((name, tag_key(tags)), 0)

    def counter_total(self, name: str) -> float:
        """The counter summed over every tag combination."""
        return sum(v for (n, _), v in self._counters.items() if n == name)

    def histogram(self, name: str, **tags: Any) -> Histogram | None:
        return self._histograms.get((name, tag_key(tags)))

    def is_empty(self) -> bool:
        return not self._counters and not self._histograms

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready dump, sorted by name then tags so equal registries dump equal bytes."""
        counters = [{"name": n, "tags": dict(t), "value": v} for (n, t), v in sorted(self._counters.items())]
        histograms = [{"name": n, "tags": dict(t), "count": h.count, "sum": h.total, "bounds": list(h.bounds),
                       "counts": list(h.counts)} for (n, t), h in sorted(self._histograms.items())]
        return {"counters": counters, "histograms": histograms}

    def merge_snapshot(self, snapshot: Mapping[str, Any]) -> None:
        """Add a snapshot's values into this registry (histograms with other bounds are skipped)."""
        for row in snapshot.get("counters", ()):
            self.inc(str(row["name"]), float(row["value"]), **dict(row.get("tags") or {}))
        for row in snapshot.get("histograms", ()):
            key = (str(row["name"]), tag_key(dict(row.get("tags") or {})))
            bounds = tuple(float(b) for b in row["bounds"])
            counts = [int(c) for c in row["counts"]]
            if len(counts) != len(bounds) + 1:
                continue
            hist = self._histograms.get(key)
            if hist is None:
                hist = self._histograms[key] = Histogram.empty(bounds)
            if hist.bounds != bounds:
                continue
            hist.counts = [a + b for a, b in zip(hist.counts, counts, strict=True)]
            hist.count += int(row["count"])
            hist.total += float(row["sum"])

    def drain_delta(self) -> dict[str, Any]:
        """A snapshot of what was added since the previous drain (for persisting totals
        without counting anything twice); the registry itself keeps its values."""
        seen_c: dict[Any, float] = self._drained["counters"]
        seen_h: dict[Any, tuple[list[int], int, float]] = self._drained["histograms"]
        counters = []
        for (n, t), v in sorted(self._counters.items()):
            delta = v - seen_c.get((n, t), 0)
            if delta:
                counters.append({"name": n, "tags": dict(t), "value": delta})
            seen_c[(n, t)] = v
        histograms = []
        for (n, t), h in sorted(self._histograms.items()):
            old_counts, old_count, old_sum = seen_h.get((n, t), ([0] * len(h.counts), 0, 0.0))
            if h.count != old_count:
                histograms.append({"name": n, "tags": dict(t), "count": h.count - old_count, "sum": h.total - old_sum,
                                   "bounds": list(h.bounds),
                                   "counts": [a - b for a, b in zip(h.counts, old_counts, strict=True)]})
            seen_h[(n, t)] = (list(h.counts), h.count, h.total)
        return {"counters": counters, "histograms": histograms}

    def reset(self) -> None:
        self._counters.clear()
        self._histograms.clear()
        self._drained = {"counters": {}, "histograms": {}}
