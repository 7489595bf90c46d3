"""The `memoryConsolidation` block: the cold-path consolidator that turns clusters of linked
notes into lessons (one background-slot call per cluster, on the memory consolidation tick)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class ConsolidationConfig:
    phase_label: ClassVar[str] = "consolidator (v2 phase 5)"
    phase_rank: ClassVar[int] = 65
    phase_settings: ClassVar[tuple[str, ...]] = ("min_cluster_size", "cooldown_ms")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_CONSOLIDATION")
    cooldown_ms: int = int_field(0, 0, 365 * 24 * 3600 * 1000)  # a note this young is not a candidate yet
    min_cluster_size: int = int_field(3, 2, 50)
    max_clusters_per_tick: int = int_field(5, 1, 100)
    distill_timeout_ms: int = int_field(45_000, 100, 600_000)
    # lesson_distill.gbnf's longest answer is about 590 characters and a token is at least one:
    # a lower limit can cut a lesson mid-line, and a cut lesson cannot be parsed
    n_predict: int = int_field(640, 32, 1024)
