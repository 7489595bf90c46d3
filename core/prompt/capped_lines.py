"""Fit a section's lines into a token budget, marking the cut with one `[truncated]` line.

Memory sections (profile facts, note pointers) share this so every section truncates the
same way: whole lines only, and room kept for the marker whenever more lines follow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

TRUNCATED = "[truncated]"


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
