"""The `memory_views` service: the read-only memory views the hosts publish (serve's
/api/memory routes, the sidecar's memory_* requests, later the TUI's Memory tab) — which
phases are on, hybrid recall's embedding coverage, and the links of one note.

Nothing here writes: a state dir without memory.sqlite answers empty views and the file is
not created; a corrupt or locked file raises the memory service's `StoreError`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .memory_contract import MEMORY_SERVICE, Memory

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

EMBEDDING_STATUS_SERVICE = "memory_embedding_status"  # provided by the memory_embeddings plugin
PREVIEW_CHARS = 200


def _preview(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


class MemoryViews:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime

    @property
    def memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    def phases(self) -> list[dict[str, Any]]:
        from .phase_switches import phase_switches

        return phase_switches(self.runtime.config.blocks)

    def embeddings(self) -> dict[str, Any]:
        """Hybrid recall's switch, model and coverage; `installed: false` without its plugin."""
        view = self.runtime.service(EMBEDDING_STATUS_SERVICE, None)  # None without its plugin
        if view is None:
            return {"installed": False, "enabled": False}
        return {"installed": True, **view.status()}

    def links(self, note_id: int) -> dict[str, Any] | None:
        """The note and every edge touching it (both directions, oldest first) with a preview
        of the note at the other end; None when there is no such note."""
        memory = self.memory
        if not memory.path.exists():
            return None
        notes = memory.note_store()
        note = notes.get(note_id)
        if note is None:
            return None
        edges = []
        for link in memory.link_store().links_of(note_id):
            outgoing = link.from_id == note_id
            other_id = link.to_id if outgoing else link.from_id
            other = notes.get(other_id)
            edges.append({**link.to_json(), "direction": "out" if outgoing else "in",
                          "other": None if other is None else {"id": other.id, "content": _preview(other.content),
                                                               "tags": list(other.tags)}})
        return {"note": note.to_json(), "links": edges}
