"""The `web` config block: `os.web.fetch` limits and the `os.web.search` provider chain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

WEB_BLOCK = "web"
PROVIDER_NAMES = ("exa", "duckduckgo", "brave", "searxng")


def _providers(_inst: object, attribute: attrs.Attribute, value: Any) -> None:
    names = (value,) if isinstance(value, str) else value
    unknown = [n for n in names if n not in PROVIDER_NAMES]
    if unknown:
        raise ValueError(f"{attribute.name} must be one of {', '.join(PROVIDER_NAMES)}; got {', '.join(unknown)}")


@attrs.frozen
class WebSearchConfig:
    """`provider` answers first; `fallback` providers are tried in order when it fails.

    Exa's MCP endpoint and DuckDuckGo's HTML page need no key; Exa uses `exaApiKeyEnv`
    when that variable is set, Brave needs its key, SearXNG needs `searxngUrl`.
    """

    provider: str = attrs.field(default="exa", validator=_providers)
    fallback: tuple[str, ...] = attrs.field(factory=lambda: ("duckduckgo",), converter=tuple, validator=_providers)
    limit: int = int_field(5, 1, 20)
    timeout_s: int = int_field(15, 1, 120)
    max_retries: int = int_field(2, 0, 10)  # retries of a 429 against the same provider before falling through
    retry_base_delay_ms: int = int_field(500, 0, 60_000)
    cache_ttl_minutes: int = int_field(60, 0, 7 * 24 * 60)
    persist_cache: bool = value_field(True)
    exa_url: str = value_field("https://mcp.exa.ai/mcp")
    exa_api_key_env: str = value_field("EXA_API_KEY")
    duckduckgo_url: str = value_field("https://html.duckduckgo.com/html/")
    brave_url: str = value_field("https://api.search.brave.com/res/v1/web/search")
    brave_api_key_env: str = value_field("BRAVE_API_KEY")
    searxng_url: str = value_field("")


@attrs.frozen
class WebConfig:
    fetch_max_bytes: int = int_field(2 * 1024 * 1024, 1024, 256 * 1024 * 1024)
    fetch_max_chars: int = int_field(20_000, 200, 1_000_000)
    fetch_timeout_s: int = int_field(20, 1, 300)
    max_retries: int = int_field(2, 0, 10)
    retry_base_delay_ms: int = int_field(500, 0, 60_000)
    retry_max_delay_ms: int = int_field(4000, 0, 60_000)
    search: WebSearchConfig = attrs.field(factory=WebSearchConfig)


def web_config(runtime: RuntimeView) -> WebConfig:
    try:
        block = runtime.config.block(WEB_BLOCK)
    except (KeyError, AttributeError):
        return WebConfig()
    return block if isinstance(block, WebConfig) else WebConfig()
