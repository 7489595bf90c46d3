"""The provider fallback chain as the editors see it (`providers fallback ...`, the TUI's
Providers panel): the effective chain (active provider first, the local llama-server
appended as last resort), which links cannot move, and what `llm.fallback.chain` stores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

LOCAL_KIND = "llama-server"


def effective_chain(llm: Any) -> tuple[list[str], str | None, list[str]]:
    """(effective chain, local id, configured ids) for a structured LlmConfig."""
    from atomic_agent.api import resolve_fallback_chain

    ids = [e["id"] for e in llm.providers] or ["local"]
    active = llm.active_text_provider or ids[0]
    kinds = {e["id"]: e["kind"] for e in llm.providers} or {"local": LOCAL_KIND}
    local = next((pid for pid in ids if kinds.get(pid) == LOCAL_KIND), None)
    return list(resolve_fallback_chain(llm.fallback, ids, active, local)), local, ids


def fixed_positions(chain: list[str], llm: Any, local: str | None) -> set[int]:
    """Positions that cannot move: the head, and the auto-appended local tail."""
    fixed = {0}
    if llm.fallback.append_local and local is not None and chain[-1] == local and local not in llm.fallback.chain:
        fixed.add(len(chain) - 1)
    return fixed


def declared_links(effective: Sequence[str], fallback: Any, local_id: str | None) -> tuple[str, ...]:
    """What `llm.fallback.chain` should store for an effective chain: the synthesised local
    tail is left out, so writing the chain back never doubles it."""
    links = list(effective)
    if fallback.append_local and local_id is not None and links and links[-1] == local_id \
            and local_id not in fallback.chain:
        links.pop()
    return tuple(links)
