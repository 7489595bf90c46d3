"""Ranked multi-term model search over ids and catalog metadata.

Every term must match (AND). A term's rank, best first: exact id, id prefix, vendor or
tag (exact equality), start of a word in id or name, substring, subsequence. A model's
score is the sum over its terms; equal scores keep catalog order, so results do not
jitter as the query grows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model_details import model_tags
from .openrouter_catalog import OPENROUTER_MODELS, CatalogModel

_WORD_SPLIT = re.compile(r"[/\-_.:\s()]+")


def _is_subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def term_rank(model: CatalogModel, term: str) -> int | None:
    mid, name = model.id.lower(), model.name.lower()
    if mid == term:
        return 0
    if mid.startswith(term):
        return 1
    if term in model_tags(model):
        return 2
    if any(w.startswith(term) for w in _WORD_SPLIT.split(f"{mid} {name}") if w):
        return 3
    if term in mid or term in name:
        return 4
    if _is_subsequence(term, mid):
        return 5
    return None


def search_models(query: str, models: Sequence[CatalogModel] = OPENROUTER_MODELS) -> list[CatalogModel]:
    terms = [t for t in query.lower().split() if t]
    if not terms:
        return list(models)
    scored: list[tuple[int, int, CatalogModel]] = []
    for position, model in enumerate(models):
        total = 0
        for term in terms:
            rank = term_rank(model, term)
            if rank is None:
                break
            total += rank
        else:
            scored.append((total, position, model))
    return [m for _, _, m in sorted(scored, key=lambda s: (s[0], s[1]))]
