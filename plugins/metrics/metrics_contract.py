"""The `metrics` service as other plugins see it: its name and what it offers.

A contract module holds only a service's name and its Protocol, so another plugin may
import it (tests/test_public_api_boundary.py allows a plugin to import another plugin's
`*_contract` modules and nothing else of it, and keeps them free of implementation).
"""

from __future__ import annotations

from typing import Any, Protocol

METRICS_SERVICE = "metrics"


class Metrics(Protocol):
    """Counters and histograms of one runtime; tags become labels."""

    def inc(self, name: str, value: float = 1, **tags: Any) -> None: ...

    def observe(self, name: str, value: float, **tags: Any) -> None: ...
