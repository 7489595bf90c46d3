"""Which provider describes images: the active text provider, when it has the optional
`ImageDescriber` capability (vision_contract).

As with slot affinity, a provider standing in front of another (the fallback chain, a
session's view of it) exposes the one behind it as `wrapped_provider`; the capability is
that of the innermost provider, the primary of the chain.
"""

from __future__ import annotations

from atomic_agent.plugins.vision.vision_contract import ImageDescriber

MAX_WRAPPERS = 8  # a chain of wrappers is two or three deep; a loop must not hang the call


def image_describer(provider: object) -> ImageDescriber | None:
    for _ in range(MAX_WRAPPERS):
        if isinstance(provider, ImageDescriber):
            return provider
        inner = getattr(provider, "wrapped_provider", None)
        if inner is None or inner is provider:
            return None
        provider = inner
    return None


def provider_label(provider: object) -> str:
    """A short name for error messages: the innermost provider's class and mode."""
    for _ in range(MAX_WRAPPERS):
        inner = getattr(provider, "wrapped_provider", None)
        if inner is None or inner is provider:
            break
        provider = inner
    mode = getattr(provider, "mode", "")
    return f"{type(provider).__name__}{f' ({mode})' if mode else ''}"
