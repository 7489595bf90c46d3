"""The `memoryProfile` config block."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class ProfileConfig:
    """`### profile`: on/off, its token cap, and whether contextual facts need a keyword hit."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "profile"
    phase_rank: ClassVar[int] = 10
    phase_settings: ClassVar[tuple[str, ...]] = ()

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_PROFILE")
    max_tokens: int = int_field(512, 16, 32000)
    contextual_keyword_gate: bool = value_field(True)
