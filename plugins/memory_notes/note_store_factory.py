"""The one place the plugin builds its NoteStore: the runtime's shared database, this
block's limits, the runtime's metrics."""

from __future__ import annotations

from typing import Any


def note_store_for(runtime: Any, cfg: Any) -> Any:
    from atomic_agent.api import NoteStore, memory_database_for, metrics_of

    return NoteStore(memory_database_for(runtime), max_entries=cfg.max_entries,
                     max_content_chars=cfg.max_content_chars, metrics=metrics_of(runtime))
