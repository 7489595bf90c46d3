"""The effective fallback chain: the active provider first, the declared links, local last."""

from __future__ import annotations

from collections.abc import Sequence

from atomic_agent.providers.llm_config import FallbackConfig


def resolve_fallback_chain(fallback: FallbackConfig, configured: Sequence[str], active_id: str,
                           local_id: str | None) -> tuple[str, ...]:
    """Ordered provider ids, primary first.

    The active text provider is always hoisted to the head (a hot-swap re-primes the
    chain without editing it); ids that are no longer configured are dropped; with
    `appendLocal` the local llama-server entry is added last unless already present.
    """
    links = [active_id]
    for pid in fallback.chain or (active_id,):
        if pid in configured and pid not in links:
            links.append(pid)
    if fallback.append_local and local_id is not None and local_id not in links:
        links.append(local_id)
    return tuple(links)


def declared_links(effective: Sequence[str], fallback: FallbackConfig, local_id: str | None) -> tuple[str, ...]:
    """What `llm.fallback.chain` should store for an effective chain: the synthesised local
    tail is left out, so writing the chain back never doubles it."""
    links = list(effective)
    if fallback.append_local and local_id is not None and links and links[-1] == local_id \
            and local_id not in fallback.chain:
        links.pop()
    return tuple(links)
