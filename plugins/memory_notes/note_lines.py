"""How a note looks in the tail: `#id [tags] preview`, capped per section."""

from __future__ import annotations

from typing import Any


def preview(content: str, chars: int) -> str:
    """The content on one line, cut to `chars` with an ellipsis."""
    flat = " ".join(content.split())
    return flat if len(flat) <= chars else flat[: max(chars - 1, 1)].rstrip() + "…"


def pointer_line(note: Any, chars: int) -> str:
    tags = f" [{', '.join(note.tags)}]" if note.tags else ""
    return f"#{note.id}{tags} {preview(note.content, chars)}"
