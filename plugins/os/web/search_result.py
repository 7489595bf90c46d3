"""What a search provider returns and how it fails."""

from __future__ import annotations

from typing import Any, Protocol

import attrs


@attrs.frozen
class SearchResult:
    title: str
    url: str
    snippet: str = ""

    def to_json(self) -> dict[str, str]:
        return {"title": self.title, "url": self.url, "snippet": self.snippet}

    @classmethod
    def from_json(cls, raw: Any) -> SearchResult | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("url"), str):
            return None
        return cls(str(raw.get("title") or ""), raw["url"], str(raw.get("snippet") or ""))


class ProviderFailed(Exception):
    """The provider could not answer (5xx, timeout, unreadable page, missing key)."""


class RateLimited(ProviderFailed):
    """HTTP 429 (or the vendor's equivalent) even after the retries against this provider."""


class SearchProvider(Protocol):
    """A pluggable search backend. `search` raises ProviderFailed / RateLimited."""

    name: str

    async def search(self, query: str, limit: int, http: Any) -> list[SearchResult]: ...


class EgressDenied(Exception):
    """The egress policy kept a search request in: refused by configuration (`refused`) or
    not approved by the person. Ends the search: no other provider is tried (that would
    ask the same question again about the same query)."""

    def __init__(self, message: str, *, refused: bool) -> None:
        super().__init__(message)
        self.refused = refused
