"""The `memoryRewriter` config block (the guide's memory.retrieve.rewriter.*)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field

GATE_MODES = ("heuristic", "always")  # "embedding" needs the hybrid-recall embedding daemon (not here yet)


@attrs.frozen
class RewriterConfig:
    """Rewrite a referential follow-up ("did they mention it?") into a self-contained query."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "rewriter (v2.5 A)"
    phase_rank: ClassVar[int] = 70
    phase_settings: ClassVar[tuple[str, ...]] = ("gate_mode", "timeout_ms", "history_turns")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_REWRITER")
    timeout_ms: int = int_field(3000, 100, 60_000)
    history_turns: int = int_field(3, 1, 16)
    gate_mode: str = value_field("heuristic", choices=GATE_MODES)
    max_query_chars: int = int_field(400, 20, 400)
    n_predict: int = int_field(96, 16, 512)
