"""HTTP for search providers: retry a 429 against the same provider before falling through.

Without the retry, one transient 429 from the keyless tier would send every later
search to the weakest provider in the chain. A server Retry-After wins over the local
schedule (500 ms doubling by default); both are clamped to 10 s. Other statuses are
not retried here: the fallback chain is the backstop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from ..http.guarded_exchange import Sleep
from ..http.retry_after import MAX_RETRY_AFTER_S, parse_retry_after
from .search_result import ProviderFailed, RateLimited


class SearchHttp:
    """One httpx client plus the 429 retry schedule; providers call `request`."""

    def __init__(self, client: Any, max_retries: int = 2, base_delay_s: float = 0.5,
                 sleep: Sleep = asyncio.sleep) -> None:
        self.client = client
        self.max_retries = max_retries
        self.base_delay_s = base_delay_s
        self.sleep = sleep
        self.waits: list[float] = []

    async def request(self, provider: str, method: str, url: str, *, params: Mapping[str, Any] | None = None,
                      headers: Mapping[str, str] | None = None, json_body: Any = None,
                      data: Mapping[str, str] | None = None) -> Any:
        import httpx

        for attempt in range(self.max_retries + 1):
            try:
                response = await self.client.request(method, url, params=params, headers=headers, json=json_body,
                                                     data=data)
            except httpx.HTTPError as exc:
                raise ProviderFailed(f"{provider}: {type(exc).__name__} ({exc})") from None
            if response.status_code != 429:
                if response.status_code >= 400:
                    raise ProviderFailed(f"{provider}: HTTP {response.status_code}")
                return response
            if attempt == self.max_retries:
                break
            server = parse_retry_after(response.headers.get("retry-after"))
            wait = server if server is not None else min(self.base_delay_s * 2 ** attempt, MAX_RETRY_AFTER_S)
            self.waits.append(wait)
            await self.sleep(wait)
        raise RateLimited(f"{provider}: HTTP 429 (rate limited) after {self.max_retries} retries")
