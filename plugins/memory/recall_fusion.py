"""Blending full-text and vector recall into one ranking (hybrid recall, phase 1B).

Both sides are put on [0, 1] before they are mixed: BM25 as a fraction of the best hit's
score (FTS5's bm25() is negative, lower is better), cosine similarity min-max scaled over
the vector candidates. The blend is convex, `lexical_weight * bm25 + vector_weight * cos`,
a note missing from one side scoring 0 there. Research on this project's data
(../shared/research/memory.md §4) found convex fusion weighted towards BM25 better than
reciprocal-rank fusion with a small embedder, so that is what is done here.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs


@attrs.frozen
class FusionWeights:
    lexical: float = 0.5
    vector: float = 0.5

    def __attrs_post_init__(self) -> None:
        for name, value in (("lexical", self.lexical), ("vector", self.vector)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"fusion weight {name} must be in [0, 1], got {value}")


def blend(bm25: Mapping[int, float], cosine: Mapping[int, float], weights: FusionWeights) -> list[tuple[int, float]]:
    """(note id, blended score) best first; ties go to the newer (larger) id.

    `bm25` maps ids to FTS5 bm25() scores (negative, lower is better); `cosine` maps ids to
    cosine similarities in [-1, 1]."""
    best = max((-s for s in bm25.values()), default=0.0)
    lexical = {i: (-s / best if best > 0 else 0.0) for i, s in bm25.items()}
    low = min(cosine.values(), default=0.0)
    high = max(cosine.values(), default=0.0)
    span = high - low
    vector = {i: ((c - low) / span if span > 0 else 1.0) for i, c in cosine.items()}
    scored = {i: weights.lexical * lexical.get(i, 0.0) + weights.vector * vector.get(i, 0.0)
              for i in {*lexical, *vector}}
    return sorted(scored.items(), key=lambda item: (-item[1], -item[0]))
