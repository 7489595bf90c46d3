"""The `memoryEvolution` config block (the guide's memory.evolution.*)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class EvolverConfig:
    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "evolver (v2 phase 3)"
    phase_rank: ClassVar[int] = 60
    phase_settings: ClassVar[tuple[str, ...]] = ("max_per_write", "lease_ms")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_EVOLUTION")
    max_per_write: int = int_field(2, 0, 10)
    lease_ms: int = int_field(60_000, 0, 86_400_000)
