"""The `memoryEmbeddings` config block: hybrid recall on/off, the blend, and its limits."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field

EMBEDDINGS_ENV = "ATOMIC_AGENT_MEMORY_EMBEDDINGS"


@attrs.frozen
class EmbeddingsConfig:
    """Hybrid recall (phase 1B). Off by default; on, notes are embedded in the background
    and `### recalled` blends BM25 with cosine similarity. The vectors come from
    `llm.activeEmbeddingProvider` when one is set (an OpenAI-compatible `/v1/embeddings`),
    else from the managed embedding daemon (`llama.embeddings`, started by `llama start`)."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "embeddings (v2 phase 1B)"
    phase_rank: ClassVar[int] = 40
    phase_settings: ClassVar[tuple[str, ...]] = ("fts5_weight", "vector_weight", "candidates")

    enabled: bool = value_field(False, env=EMBEDDINGS_ENV)
    # 0.6 / 0.4 measured best on the LoCoMo dev split with all-MiniLM-L6-v2 (benchmarks/locomo_recall.py
    # --hybrid: R@10 0.729 against 0.714 at 0.5 / 0.5 and 0.704 for BM25 alone)
    fts5_weight: float = int_field(0.6, 0.0, 1.0)
    vector_weight: float = int_field(0.4, 0.0, 1.0)
    # how many BM25 hits and nearest vectors enter the blend
    candidates: int = int_field(50, 1, 1000)
    query_timeout_ms: int = int_field(2000, 50, 120_000)
    write_timeout_ms: int = int_field(30_000, 100, 600_000)
    write_batch: int = int_field(32, 1, 512)
    # a note is cut to this many characters before it is embedded (a BERT window is 512 tokens)
    max_chars: int = int_field(1200, 64, 100_000)
    # embed a note with its context key (reflection notes: the exchange and its date), not its
    # content alone; the vectors are then stored under "<model>+context", so switching re-embeds.
    # LoCoMo dev, hybrid with context keys (benchmarks/locomo_recall.py --hybrid --vector-context):
    # R@10 0.757 -> 0.773, NDCG@10 0.597 -> 0.613, MRR 0.576 -> 0.595. On by default (issue 34: what a
    # fresh install runs is the best configuration measured): it costs nothing at query time
    embed_context: bool = value_field(True)
