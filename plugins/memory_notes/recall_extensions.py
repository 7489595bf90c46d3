"""What other memory plugins add to this phase's recall, through their services: a
rewritten query (`memory_query_rewriter`, recall runs for both queries and merges them)
and link-graph expansion (`memory_links`, linked notes after the base hits).

A service that is absent, switched off or broken adds nothing, so `### recalled` is then
byte-identical to a runtime without that plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

REWRITER_SERVICE = "memory_query_rewriter"
LINKS_SERVICE = "memory_links"
RRF_K = 60  # reciprocal-rank constant: rank matters, the two queries' bm25 scales do not


class RecallExtensions:
    def __init__(self, runtime: RuntimeView | None) -> None:
        self.runtime = runtime

    def _service(self, name: str) -> Any | None:
        if self.runtime is None:
            return None
        service = self.runtime.service(name, None)
        return service if getattr(service, "enabled", False) else None

    def extra_query(self, session_id: str, user_text: str) -> str | None:
        rewriter = self._service(REWRITER_SERVICE)
        return rewriter.rewrite_for(session_id, user_text) if rewriter is not None else None

    def expand(self, session_id: str, user_text: str, base_ids: Sequence[int]) -> list[int]:
        links = self._service(LINKS_SERVICE)
        return list(links.expand(session_id, user_text, list(base_ids))) if links is not None else []


def merge_ranked(first: Sequence[Any], second: Sequence[Any], k: int) -> list[Any]:
    """Two ranked hit lists fused by reciprocal rank (a hit in both sums its two terms);
    the first list wins ties. Hits are compared by note id."""
    scores: dict[int, float] = {}
    hits: dict[int, Any] = {}
    for ranked in (first, second):
        for rank, hit in enumerate(ranked):
            scores[hit.note.id] = scores.get(hit.note.id, 0.0) + 1.0 / (RRF_K + rank + 1)
            hits.setdefault(hit.note.id, hit)
    order = sorted(hits, key=lambda i: -scores[i])  # stable: first-seen order breaks ties
    return [hits[i] for i in order[:k]]
