"""The `memory_embeddings` service (hybrid recall) as other plugins see it: its name and the
one thing they may ask of it, re-embedding every note with a progress callback (the TUI's
Memory panel). The service is None when `memoryEmbeddings.enabled` is off."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

EMBEDDINGS_SERVICE = "memory_embeddings"


class HybridRecall(Protocol):
    async def reembed(self, every_model: bool = False,
                      on_progress: Callable[[int, int], None] | None = None) -> int:
        """Drop the stored vectors (of the current model, or of every model) and embed every
        note again; how many were written. `on_progress(notes embedded so far, notes to
        embed)` is called on the event loop at the start and after each batch.
        EmbeddingUnavailable when there is no embedding source; a source failing midway
        stops early (the rest stay pending, counted by the status) and does not raise."""
        ...
