"""How a note looks in the tail: `#id (source, date) [tags] preview`, capped per section.

The id, origin and date are the note's provenance: the tail quotes it as data, and a reader
(the model, the user reading a trace) can tell where a recalled line came from and how old it is."""

from __future__ import annotations

from typing import Any


def preview(content: str, chars: int) -> str:
    """The content on one line, cut to `chars` with an ellipsis."""
    flat = " ".join(content.split())
    return flat if len(flat) <= chars else flat[: max(chars - 1, 1)].rstrip() + "…"


def provenance(source: str, at_ms: int) -> str:
    """`(source, YYYY-MM-DD)`: who wrote a stored row and on which (UTC) day."""
    from atomic_agent.api import store_clock

    return f"({preview(source, 24)}, {store_clock.iso_ms(at_ms)[:10]})"


def pointer_line(note: Any, chars: int) -> str:
    tags = f" [{', '.join(note.tags)}]" if note.tags else ""
    return f"#{note.id} {provenance(note.source, note.created_at)}{tags} {preview(note.content, chars)}"
