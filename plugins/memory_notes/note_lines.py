"""How a note looks in the tail: `#id [tags] preview`, capped per section."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

TRUNCATED = "[truncated]"


def preview(content: str, chars: int) -> str:
    """The content on one line, cut to `chars` with an ellipsis."""
    flat = " ".join(content.split())
    return flat if len(flat) <= chars else flat[: max(chars - 1, 1)].rstrip() + "…"


def pointer_line(note: Any, chars: int) -> str:
    tags = f" [{', '.join(note.tags)}]" if note.tags else ""
    return f"#{note.id}{tags} {preview(note.content, chars)}"


def capped_lines(lines: Sequence[str], max_tokens: int, count: Callable[[str], int]) -> str:
    """Lines until the next would pass `max_tokens`, then a `[truncated]` line."""
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        cost = count(line) + 1
        reserve = 0 if i == len(lines) - 1 else count(TRUNCATED) + 1
        if used + cost + reserve > max_tokens:
            kept.append(TRUNCATED)
            break
        kept.append(line)
        used += cost
    return "\n".join(kept)
