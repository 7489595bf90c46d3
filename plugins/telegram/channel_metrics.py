"""The channel's counters: kept locally for `status` and recorded into the runtime's
`metrics` service when one is there (names under `telegram.`).

messages_received counts agent-visible inbound (after the owner check and the slash
commands); messages_sent one per logical outbound message (a reply or a report), not per
chunk.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.metrics.metrics_contract import METRICS_SERVICE, Metrics

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


class ChannelMetrics:
    def __init__(self, registry: Any | None) -> None:
        self._registry = registry
        self.counts: Counter[str] = Counter()

    def inc(self, name: str, **tags: Any) -> None:
        key = name + ("{" + ",".join(f"{k}={v}" for k, v in sorted(tags.items())) + "}" if tags else "")
        self.counts[key] += 1
        if self._registry is not None:
            try:
                self._registry.inc(f"telegram.{name}", **tags)
            except Exception:  # metrics are observability: never break the channel over them
                pass

    def snapshot(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def metrics_registry(runtime: RuntimeView) -> Metrics | None:
    try:
        return runtime.service(METRICS_SERVICE)
    except Exception:  # the metrics plugin is optional
        return None
