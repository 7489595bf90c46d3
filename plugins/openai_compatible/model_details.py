"""How a catalog model is shown (context, price, capabilities) and which tags it answers to.

The display strings live here once; search tags are added beside them rather than by
changing what the rows render.
"""

from __future__ import annotations

from .openrouter_catalog import CatalogModel

CHEAP_PROMPT_PER_M = 0.5


def context_display(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}m"
    return f"{round(tokens / 1000)}k"


def context_tags(tokens: int) -> set[str]:
    """As displayed (1.0m), floored to its whole unit (the bucket it falls in: 1_310_720 is
    both 1.3m and 1m, a 2M window only 2m), and in binary k when an exact multiple of 1024
    (131_072 answers to 128k)."""
    tags = {context_display(tokens)}
    tags.add(f"{tokens // 1_000_000}m" if tokens >= 1_000_000 else f"{tokens // 1000}k")
    if tokens % 1024 == 0:
        tags.add(f"{tokens // 1024}k")
    return tags


def price_display(model: CatalogModel) -> str:
    if model.routed:
        return "variable"
    if model.free:
        return "free"
    return f"${model.prompt_per_m:g}/${model.completion_per_m:g} per 1M"


def capability_display(model: CatalogModel) -> str:
    caps = ["vision" if model.vision else "text"]
    if model.tools:
        caps.append("tools")
    if model.cache:
        caps.append("cache")
    return ", ".join(caps)


def model_tags(model: CatalogModel) -> set[str]:
    tags = {model.vendor, "vision" if model.vision else "text", *context_tags(model.context)}
    if model.tools:
        tags.add("tools")
    if model.cache:
        tags.add("cache")
    if model.free:
        tags.add("free")
    elif not model.routed and model.prompt_per_m <= CHEAP_PROMPT_PER_M:
        tags.add("cheap")
    if model.routed:
        tags.add("routed")
    return tags
