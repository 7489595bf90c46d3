"""Token usage and cost of one completion, in the trace's camelCase shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .endpoint_entry import Pricing


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def cached_tokens(usage: Mapping[str, Any]) -> int:
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping) and _int(details.get("cached_tokens")):
        return _int(details.get("cached_tokens"))
    return _int(usage.get("cache_read_input_tokens")) or _int(usage.get("cached_tokens"))


def cost_usd(prompt: int, cached: int, completion: int, pricing: Pricing) -> float:
    cached_rate = pricing.cached_prompt_per_m if pricing.cached_prompt_per_m is not None else pricing.prompt_per_m
    total = (max(prompt - cached, 0) * pricing.prompt_per_m + cached * cached_rate
             + completion * pricing.completion_per_m)
    return round(total / 1_000_000, 8)


def usage_fields(usage: Any, model: str, pricing: Pricing | None, track_cost: bool = True) -> dict[str, Any]:
    """{model, promptTokens, completionTokens, cachedTokens[, costUsd]}; {} without usage.

    A vendor-reported cost (OpenRouter's `usage.cost`) wins over the entry's price table.
    """
    if not isinstance(usage, Mapping):
        return {}
    prompt, completion = _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
    cached = cached_tokens(usage)
    out: dict[str, Any] = {"model": model, "promptTokens": prompt, "completionTokens": completion,
                           "cachedTokens": cached}
    if track_cost:
        reported = usage.get("cost")
        if isinstance(reported, (int, float)) and not isinstance(reported, bool):
            out["costUsd"] = float(reported)
        elif pricing is not None:
            out["costUsd"] = cost_usd(prompt, cached, completion, pricing)
    return out
