"""`os.web.search`: search the web through the configured provider chain.

The runtime's spec is built from this module's constants at start-up; the chain (its
providers, and the cache and cooldown files it reads) is built on the first search.

Every request a search sends — each provider tried, each retry, each redirect hop — goes
through the egress policy every network tool follows (`http.egress_policy`): a provider
host outside `http.allowedHosts` asks under `http` (refused in `allowlist-only` mode), and
after a credential read in the session under `sensitive_egress`, since the query itself is
data leaving the machine. A cached answer sends nothing and asks nothing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from ..http.http_config import HttpConfig, http_config
from .web_config import WebSearchConfig, web_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

    from ..http.guarded_exchange import Sleep
    from .search_providers import ProviderFactory

TOOL_NAME = "os.web.search"
ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20},
    },
    "required": ["query"],
    "additionalProperties": False,
}
EXAMPLE = '{"tool": "os.web.search", "args": {"query": "python 3.13 release date", "limit": 5}}'


class WebSearch:
    """The chain, its cache and cooldown, and how to call providers; one per runtime."""

    def __init__(self, search: WebSearchConfig, state_dir: Path | None,
                 factories: Mapping[str, ProviderFactory] | None = None, sleep: Sleep = asyncio.sleep) -> None:
        from .provider_cooldown import COOLDOWN_FILE, ProviderCooldown
        from .search_cache import CACHE_FILE, SearchCache
        from .search_chain import SearchChain, build_providers
        from .search_providers import BUILTIN_PROVIDERS

        factories = BUILTIN_PROVIDERS if factories is None else factories
        persist = state_dir if search.persist_cache else None
        self.config = search
        self.sleep = sleep
        self.chain = SearchChain(build_providers(search, factories),
                                 SearchCache(search.cache_ttl_minutes * 60.0, persist / CACHE_FILE if persist else None),
                                 ProviderCooldown(persist / COOLDOWN_FILE if persist else None))

    async def run(self, args: Mapping[str, Any], egress: EgressGate | None = None) -> ToolResult:
        """`egress` decides each outgoing request (the tool always passes one; None only in
        tests of the provider chain itself)."""
        import httpx

        from .search_http import SearchHttp
        from .search_result import EgressDenied

        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error(f"{TOOL_NAME}: query must be a non-empty string")
        limit = int(args.get("limit") or self.config.limit)
        hooks = {"request": [egress.check]} if egress is not None else {}
        async with httpx.AsyncClient(trust_env=False, timeout=httpx.Timeout(float(self.config.timeout_s)),
                                     follow_redirects=True, event_hooks=hooks) as client:
            http = SearchHttp(client, self.config.max_retries, self.config.retry_base_delay_ms / 1000, self.sleep)
            try:
                outcome = await self.chain.search(query, limit, http)
            except EgressDenied as exc:
                return ToolResult.error(f"{TOOL_NAME}: {exc}", denied=not exc.refused, notAllowlisted=exc.refused)
        details = {"results": [r.to_json() for r in outcome.results], "provider": outcome.provider,
                   "cached": outcome.cached, "notes": list(outcome.notes), "retryWaits": http.waits}
        if outcome.provider is None:
            why = "; ".join(outcome.notes) or "no provider configured"
            return ToolResult.error(f"{TOOL_NAME}: no provider answered ({why})", **details)
        lines = [f"{len(outcome.results)} results from {outcome.provider}" + (" (cached)" if outcome.cached else "")]
        for index, result in enumerate(outcome.results, 1):
            lines.append(f"{index}. {result.title or result.url} — {result.url}")
            if result.snippet:
                lines.append(f"   {result.snippet[:200]}")
        if outcome.notes:
            lines.append("notes: " + "; ".join(outcome.notes))
        return ToolResult.ok("\n".join(lines), **details)


class EgressGate:
    """The egress policy for one search call: asked once per host (retries and later pages
    of the same host do not ask again), before anything is sent to it."""

    def __init__(self, ctx: Any, http: HttpConfig, query: str = "") -> None:
        self.ctx = ctx
        self.http = http
        self.query = query  # shown with the question: it is what leaves the machine
        self._admitted: set[str] = set()

    async def check(self, request: Any) -> None:
        from ..http.egress_policy import admit_egress
        from .search_result import EgressDenied

        host = (request.url.host or "").lower()
        if host in self._admitted:
            return
        body = bytes(request.content) if request.content else None
        decision = await admit_egress(self.ctx, TOOL_NAME, request.method, str(request.url), host, self.http,
                                      body=body, carrying=f"the search query {self.query!r}" if self.query else "")
        if not decision.allowed:
            raise EgressDenied(decision.message, refused=decision.refused)
        self._admitted.add(host)


def _spec(run: Any) -> ToolSpec:
    return ToolSpec(name=TOOL_NAME, summary="Search the web; returns titles, URLs and snippets (provider chain with "
                    "fallback and a one-hour cache).", args_schema=ARGS_SCHEMA,
                    resource_class=ResourceClass.PURE_READ, run=run, durable=True, tier=Tier.FREQUENT, example=EXAMPLE)


def build_search_tool(search: WebSearchConfig, state_dir: Path | None, environ: Mapping[str, str] | None = None,
                      factories: Mapping[str, ProviderFactory] | None = None,
                      sleep: Sleep = asyncio.sleep, http: HttpConfig | None = None) -> tuple[ToolSpec, WebSearch]:
    """The spec and its engine. The first search warns on stderr, once per state dir, about
    configured providers missing a key: said at construction, it greeted every first run of a
    default install (`./scripts/demo` included) about a tool nobody had asked for."""
    engine = WebSearch(search, state_dir, factories, sleep)
    policy = http if http is not None else HttpConfig()
    env = os.environ if environ is None else environ
    warned: list[bool] = []

    async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        if not warned:
            warned.append(True)
            from .missing_key_warning import warn_missing_keys

            warn_missing_keys(search, env, state_dir=state_dir)
        return await engine.run(args, EgressGate(ctx, policy, str(args.get("query") or "")))

    return _spec(run), engine


def search_tool_spec(runtime: RuntimeView) -> ToolSpec:
    """The runtime's tool: the same spec, with the engine built by `build_search_tool` on the first search."""
    search = web_config(runtime).search
    http = http_config(runtime)
    state_dir = getattr(runtime, "state_dir", None)
    built: list[ToolSpec] = []

    async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        if not built:
            built.append(build_search_tool(search, Path(state_dir) if state_dir else None, http=http)[0])
        return await built[0].run(args, ctx)

    return _spec(run)
