"""The web-search result cache: exact query (+ limit) → results, TTL and a FIFO cap.

Mirrored to `<state>/web-search-cache.json` so a campaign that runs one agent process
per task inherits the previous process's answers instead of re-spending quota.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from .json_state_file import load_state, save_state
from .search_result import SearchResult

CACHE_FILE = "web-search-cache.json"
MAX_ENTRIES = 256


def cache_key(query: str, limit: int) -> str:
    return f"{limit}\x1f{query}"


class SearchCache:
    def __init__(self, ttl_s: float, path: Path | None = None, clock: Callable[[], float] = time.time,
                 max_entries: int = MAX_ENTRIES) -> None:
        self.ttl_s = ttl_s
        self.path = path
        self.clock = clock
        self.max_entries = max_entries
        self._rows: OrderedDict[str, tuple[float, list[SearchResult], str]] = OrderedDict()
        self._load()

    def _load(self) -> None:
        raw = load_state(self.path)
        rows = raw.get("entries") if raw else None
        if not isinstance(rows, list):
            return
        now = self.clock()
        for row in rows:
            try:
                key, stored, provider = str(row["key"]), float(row["at"]), str(row.get("provider", ""))
                results = [r for r in (SearchResult.from_json(x) for x in row["results"]) if r is not None]
            except (KeyError, TypeError, ValueError):
                continue  # one malformed row does not spoil the rest
            if now - stored < self.ttl_s:
                self._rows[key] = (stored, results, provider)
        while len(self._rows) > self.max_entries:
            self._rows.popitem(last=False)

    def _save(self) -> None:
        save_state(self.path, {"version": 1, "entries": [
            {"key": k, "at": at, "provider": p, "results": [r.to_json() for r in res]}
            for k, (at, res, p) in self._rows.items()]})

    def get(self, key: str) -> tuple[list[SearchResult], str] | None:
        row = self._rows.get(key)
        if row is None:
            return None
        if self.clock() - row[0] >= self.ttl_s:
            del self._rows[key]
            return None
        return row[1], row[2]

    def put(self, key: str, results: list[SearchResult], provider: str) -> None:
        if self.ttl_s <= 0:
            return
        self._rows.pop(key, None)  # a refreshed row moves to the back of the FIFO
        self._rows[key] = (self.clock(), list(results), provider)
        while len(self._rows) > self.max_entries:
            self._rows.popitem(last=False)
        self._save()

    def __len__(self) -> int:
        return len(self._rows)
