"""The `memorySegmentation` config block (the guide's memory.reflection.segmentation.*)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class SegmentationConfig:
    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "segmentation (v2.5 B)"
    phase_rank: ClassVar[int] = 80
    phase_settings: ClassVar[tuple[str, ...]] = ("trigger_every_turns", "window_turns")

    enabled: bool = value_field(False, env="ATOMIC_AGENT_MEMORY_SEGMENTATION")
    trigger_every_turns: int = int_field(3, 1, 100)
    window_turns: int = int_field(5, 1, 16)
    # at a graceful stop, the sessions (newest first) whose turns since their last cadence point
    # are still reflected; 0 leaves them unreflected
    stop_flush_sessions: int = int_field(8, 0, 256)
