"""Ask the configured providers in order until one answers; cache and park as we go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .provider_cooldown import ProviderCooldown
from .search_cache import SearchCache, cache_key
from .search_http import SearchHttp
from .search_result import ProviderFailed, RateLimited, SearchProvider, SearchResult


@attrs.frozen
class SearchOutcome:
    results: list[SearchResult]
    provider: str | None  # who answered (None: nobody)
    cached: bool = False
    notes: tuple[str, ...] = ()  # what went wrong on the way, for the summary


class SearchChain:
    def __init__(self, providers: Sequence[SearchProvider], cache: SearchCache, cooldown: ProviderCooldown) -> None:
        self.providers = list(providers)
        self.cache = cache
        self.cooldown = cooldown

    def _order(self) -> list[SearchProvider]:
        ready = [p for p in self.providers if self.cooldown.parked_for(p.name) == 0]
        # when everything is parked, trying beats failing outright
        return ready or list(self.providers)

    async def search(self, query: str, limit: int, http: SearchHttp) -> SearchOutcome:
        key = cache_key(query, limit)
        hit = self.cache.get(key)
        if hit is not None:
            return SearchOutcome(hit[0], hit[1], cached=True)
        notes: list[str] = []
        parked = [p.name for p in self.providers if self.cooldown.parked_for(p.name) > 0]
        if parked and len(parked) < len(self.providers):
            notes.append(f"skipped (cooling down): {', '.join(parked)}")
        for provider in self._order():
            try:
                results = await provider.search(query, limit, http)
            except RateLimited as exc:
                notes.append(f"{exc}; parked {self.cooldown.strike(provider.name):g}s")
                continue
            except ProviderFailed as exc:
                notes.append(f"{exc}; parked {self.cooldown.strike(provider.name):g}s")
                continue
            self.cooldown.clear(provider.name)
            if not results:
                notes.append(f"{provider.name}: no results")
                continue
            self.cache.put(key, results, provider.name)
            return SearchOutcome(results, provider.name, notes=tuple(notes))
        return SearchOutcome([], None, notes=tuple(notes))


def build_providers(search: Any, factories: Mapping[str, Any]) -> list[SearchProvider]:
    names: list[str] = []
    for name in (search.provider, *search.fallback):
        if name not in names:
            names.append(name)
    return [factories[name](search) for name in names]
