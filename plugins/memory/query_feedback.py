"""Pseudo-relevance feedback for note recall: the words the best hits share, added to a
second full-text query, and the two rankings fused.

The first recall (BM25, or hybrid) ranks notes for the query; the content words of its top
`docs` notes that are not already in the query are scored by the reciprocal rank of the
notes they appear in (a word in the first note counts 1, in the second 1/2, ...), and the
best `terms` of them are appended to the query for a second, full-text-only recall. The
two rankings are fused by reciprocal rank, the second weighted by `weight`, so a note the
first recall ranked well keeps its place unless the expanded query agrees with a new one.
No model is involved; it costs one more FTS5 query.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from .fts_query import query_terms

RRF_K = 60


@attrs.frozen
class QueryFeedback:
    docs: int = 5  # the first recall's top notes the feedback words are drawn from
    terms: int = 10  # feedback words added to the query
    weight: float = 0.5  # the expanded query's share in the fused ranking (the first recall's is 1)

    def __attrs_post_init__(self) -> None:
        if self.docs < 1 or self.terms < 1 or not 0.0 < self.weight <= 1.0:
            raise ValueError(f"query feedback needs docs >= 1, terms >= 1 and 0 < weight <= 1, got {self}")


def feedback_terms(query: str, notes: Sequence[Any], feedback: QueryFeedback) -> list[str]:
    """The words to add to `query`, best first (ties: first seen)."""
    asked = set(query_terms(query))
    scores: dict[str, float] = {}
    for rank, note in enumerate(notes[: feedback.docs]):
        for word in query_terms(note.content):
            if word not in asked:
                scores[word] = scores.get(word, 0.0) + 1.0 / (rank + 1)
    return sorted(scores, key=lambda w: -scores[w])[: feedback.terms]


def fuse(first: Sequence[Any], second: Sequence[Any], weight: float, k: int) -> list[tuple[Any, float]]:
    """(hit, fused score) best first: weighted reciprocal-rank fusion by note id; the first
    ranking wins ties."""
    scores: dict[int, float] = {}
    hits: dict[int, Any] = {}
    for ranked, share in ((first, 1.0), (second, weight)):
        for rank, hit in enumerate(ranked):
            scores[hit.note.id] = scores.get(hit.note.id, 0.0) + share / (RRF_K + rank + 1)
            hits.setdefault(hit.note.id, hit)
    order = sorted(hits, key=lambda i: -scores[i])  # stable: first-seen order breaks ties
    return [(hits[i], scores[i]) for i in order[:k]]
