"""The `memoryLinks` config block (the guide's memory.links.*)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class LinksConfig:
    """The link graph: recall expansion over it, and the link-generator sub-call that grows it."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "links (v2 phase 2)"
    phase_rank: ClassVar[int] = 50
    phase_settings: ClassVar[tuple[str, ...]] = ("auto_generate", "expansion_depth", "max_expanded")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_LINKS")
    auto_generate: bool = value_field(True)
    expansion_depth: int = int_field(1, 1, 3)
    max_expanded: int = int_field(12, 0, 50)
    max_links_per_call: int = int_field(4, 0, 16)
    min_candidates: int = int_field(2, 2, 50)
    generator_timeout_ms: int = int_field(8000, 100, 600_000)
    n_predict: int = int_field(96, 16, 1024)
