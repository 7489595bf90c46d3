"""The `memoryEvolution` config block (the guide's memory.evolution.*)."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class EvolverConfig:
    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_EVOLUTION")
    max_per_write: int = int_field(2, 0, 10)
    lease_ms: int = int_field(60_000, 0, 86_400_000)
