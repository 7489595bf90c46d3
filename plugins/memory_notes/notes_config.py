"""The `memoryNotes` config block (with its `recallInjection` and `index` sub-blocks)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class RecallInjectionConfig:
    """`### recalled`: top-k BM25 hits for the user message."""

    enabled: bool = value_field(True)
    k: int = int_field(3, 1, 20)
    preview_chars: int = int_field(160, 20, 2000)
    max_tokens: int = int_field(400, 16, 32000)
    # pseudo-relevance feedback: this many words of the best hits join a second full-text query
    # fused with the first (0: off). LoCoMo dev with context keys (benchmarks/locomo_recall.py
    # feedback): BM25 R@10 0.749 -> 0.759, NDCG@10 0.599 -> 0.603; hybrid 0.757 -> 0.764, 0.597 ->
    # 0.608. Off by default for its cost: the second query's frequent words put recall p50 at
    # 10k synthetic notes from 0.4 to about 30 ms (benchmarks/memory_recall.py --feedback 10)
    feedback_terms: int = int_field(0, 0, 32)
    feedback_docs: int = int_field(5, 1, 20)


@attrs.frozen
class IndexConfig:
    """`### memory-index`: pointers to the most recently updated notes."""

    enabled: bool = value_field(True)
    limit: int = int_field(20, 1, 200)
    preview_chars: int = int_field(60, 10, 500)
    max_tokens: int = int_field(300, 16, 32000)


@attrs.frozen
class NotesConfig:
    """Notes: on/off, the hard cap (FIFO eviction past it), size limits, recall defaults."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "notes"
    phase_rank: ClassVar[int] = 20
    phase_settings: ClassVar[tuple[str, ...]] = ()

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_NOTES")
    max_entries: int = int_field(1000, 1, 10_000_000)
    max_content_chars: int = int_field(2000, 100, 100_000)
    recall_default_k: int = int_field(5, 1, 50)
    recall_injection: RecallInjectionConfig = attrs.field(factory=RecallInjectionConfig)
    index: IndexConfig = attrs.field(factory=IndexConfig)

