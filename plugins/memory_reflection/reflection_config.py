"""The `memoryReflection` config block."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class ReflectionConfig:
    """End-of-turn reflection: on/off, its time limit and the per-call write caps."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "reflection"
    phase_rank: ClassVar[int] = 30
    phase_settings: ClassVar[tuple[str, ...]] = ("distil_lessons", "detour_calls")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_REFLECTION")
    timeout_ms: int = int_field(20000, 100, 600_000)
    max_facts_per_call: int = int_field(3, 0, 10)
    auto_store_notes: bool = value_field(True)
    max_notes_per_call: int = int_field(2, 0, 10)
    n_predict: int = int_field(160, 16, 2048)
    # after a failed, corrected or detoured turn, one more call distils a candidate lesson
    # (needs `memoryLessons` on); `detourCalls` tool calls for a short answer count as a detour
    distil_lessons: bool = value_field(True)
    detour_calls: int = int_field(6, 2, 100)
