"""The one place the plugin reaches its notes: the `memory` service (the memory plugin owns
memory.sqlite) with this block's limits."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE, Memory

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView



def memory_of(runtime: RuntimeView) -> Memory:
    """The runtime's `memory` service: stores, their error types and the metrics sink."""
    return runtime.service(MEMORY_SERVICE)


def note_store_for(runtime: RuntimeView, cfg: Any) -> Any:
    return memory_of(runtime).note_store(max_entries=cfg.max_entries, max_content_chars=cfg.max_content_chars)
