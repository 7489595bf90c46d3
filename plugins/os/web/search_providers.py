"""The built-in search providers by name; the chain builds the configured ones from here.

A provider is anything with a `name` and `async search(query, limit, http)` (see
search_result.SearchProvider); pass your own mapping to `build_search_tool` to add one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .duckduckgo_provider import DuckDuckGoProvider
from .exa_provider import ExaProvider
from .keyed_providers import BraveProvider, SearxngProvider
from .search_result import SearchProvider

ProviderFactory = Callable[[Any], SearchProvider]

BUILTIN_PROVIDERS: dict[str, ProviderFactory] = {
    "exa": lambda s: ExaProvider(s.exa_url, s.exa_api_key_env),
    "duckduckgo": lambda s: DuckDuckGoProvider(s.duckduckgo_url),
    "brave": lambda s: BraveProvider(s.brave_url, s.brave_api_key_env),
    "searxng": lambda s: SearxngProvider(s.searxng_url),
}
