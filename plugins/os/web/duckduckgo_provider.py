"""DuckDuckGo's keyless HTML results page, parsed with the stdlib HTML parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import attrs

from .search_result import RateLimited, SearchResult


def _real_url(href: str) -> str:
    """DuckDuckGo wraps result links as //duckduckgo.com/l/?uddg=<target>."""
    absolute = urljoin("https://duckduckgo.com/", href)
    parts = urlsplit(absolute)
    if parts.path.startswith("/l/"):
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return absolute


class _ResultsPage(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[dict[str, str]] = []
        self._field: str | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = dict(attrs)
        classes = (attr.get("class") or "").split()
        if self._field is not None:
            self._depth += 1
            return
        if tag == "a" and "result__a" in classes:
            self.results.append({"title": "", "url": _real_url(attr.get("href") or ""), "snippet": ""})
            self._field, self._depth = "title", 0
        elif "result__snippet" in classes and self.results:
            self._field, self._depth = "snippet", 0

    def handle_endtag(self, tag: str) -> None:
        if self._field is None:
            return
        if self._depth == 0:
            self._field = None
        else:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._field is not None and self.results:
            self.results[-1][self._field] += data


@attrs.define
class DuckDuckGoProvider:
    url: str
    name: str = "duckduckgo"

    async def search(self, query: str, limit: int, http: Any) -> list[SearchResult]:
        response = await http.request(self.name, "POST", self.url, data={"q": query},
                                      headers={"Accept": "text/html"})
        page = _ResultsPage()
        page.feed(response.text)
        # an anti-bot challenge comes back as 202, or as a page without results that says so
        if not page.results and (response.status_code == 202 or "anomaly" in response.text.lower()):
            raise RateLimited("duckduckgo: the results page answered with a bot challenge")
        results = []
        for raw in page.results:
            if raw["url"].startswith(("http://", "https://")) and "duckduckgo.com/y.js" not in raw["url"]:
                results.append(SearchResult(re.sub(r"\s+", " ", raw["title"]).strip(), raw["url"],
                                            re.sub(r"\s+", " ", raw["snippet"]).strip()))
        return results[:limit]
