"""The `memoryProfile` config block."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class ProfileConfig:
    """`### profile`: on/off, its token cap, and whether contextual facts need a keyword hit."""

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_PROFILE")
    max_tokens: int = int_field(512, 16, 32000)
    contextual_keyword_gate: bool = value_field(True)
