"""Brave Search (needs an API key) and a SearXNG instance (needs its URL), both JSON APIs."""

from __future__ import annotations

import os
import re
from typing import Any

import attrs

from .search_result import ProviderFailed, SearchResult

_TAGS = re.compile(r"<[^>]+>")


def _plain(text: Any) -> str:
    return re.sub(r"\s+", " ", _TAGS.sub("", str(text or ""))).strip()


def _json(response: Any, provider: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise ProviderFailed(f"{provider}: the answer is not JSON") from None


@attrs.define
class BraveProvider:
    url: str
    api_key_env: str = "BRAVE_API_KEY"
    name: str = "brave"

    async def search(self, query: str, limit: int, http: Any) -> list[SearchResult]:
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ProviderFailed(f"brave: {self.api_key_env} is not set")
        response = await http.request(self.name, "GET", self.url, params={"q": query, "count": limit},
                                      headers={"Accept": "application/json", "X-Subscription-Token": key})
        items = ((_json(response, self.name).get("web") or {}).get("results")) or []
        return [SearchResult(_plain(i.get("title")), i["url"], _plain(i.get("description")))
                for i in items if isinstance(i, dict) and isinstance(i.get("url"), str)][:limit]


@attrs.define
class SearxngProvider:
    url: str
    name: str = "searxng"

    async def search(self, query: str, limit: int, http: Any) -> list[SearchResult]:
        if not self.url:
            raise ProviderFailed("searxng: web.search.searxngUrl is not set")
        endpoint = self.url if self.url.rstrip("/").endswith("/search") else self.url.rstrip("/") + "/search"
        response = await http.request(self.name, "GET", endpoint, params={"q": query, "format": "json"},
                                      headers={"Accept": "application/json"})
        items = _json(response, self.name).get("results") or []
        return [SearchResult(_plain(i.get("title")), i["url"], _plain(i.get("content")))
                for i in items if isinstance(i, dict) and isinstance(i.get("url"), str)][:limit]
