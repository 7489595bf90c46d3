"""The metrics registry of a runtime, as plugins reach it (`runtime.service("metrics")`).

A runtime view without the service (a test's view, an older embedder) gets a registry of
its own, kept for as long as the view lives, so instrumented code never needs a branch.
"""

from __future__ import annotations

import weakref
from typing import Any

from atomic_agent.metrics.metrics_registry import MetricsRegistry

METRICS_SERVICE = "metrics"

_FALLBACK: weakref.WeakKeyDictionary[Any, MetricsRegistry] = weakref.WeakKeyDictionary()


def metrics_of(runtime: Any) -> MetricsRegistry:
    try:
        registry = runtime.service(METRICS_SERVICE)
    except (KeyError, AttributeError):
        registry = None
    if isinstance(registry, MetricsRegistry):
        return registry
    try:
        found = _FALLBACK.get(runtime)
        if found is None:
            found = _FALLBACK[runtime] = MetricsRegistry()
        return found
    except TypeError:  # not weak-referenceable: a private registry per call is still safe
        return MetricsRegistry()
