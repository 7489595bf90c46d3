"""Fit the conversation into its token cap without losing the current turn.

Older turns are dropped whole, oldest first, and replaced by one deterministic line
naming how many and which; the latest turn (with the user's current message) is always
kept, its longest lines clipped with a `[truncated]` marker if it alone is too big.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

TRUNCATED = "…[truncated]"


@attrs.frozen
class Older:
    """Turns older than the ones given to `pack_conversation`, never rendered (they could not
    fit anyway): how many have a conversation line, and the first and last of their indexes."""

    count: int = 0
    first: int = -1
    last: int = -1


NO_OLDER = Older()


def _clip(line: str, tokens_allowed: int, count: Callable[[str], int]) -> str:
    if count(line) <= tokens_allowed:
        return line
    keep = max(0, int(len(line) * tokens_allowed / max(1, count(line))) - len(TRUNCATED))
    return line[:keep] + TRUNCATED


def turn_cost(lines: Sequence[str], count: Callable[[str], int]) -> int:
    return sum(count(line) + 1 for line in lines)


def pack_conversation(turns: Sequence[tuple[int, list[str]]], cap_tokens: int,
                      count: Callable[[str], int], before: Older = NO_OLDER,
                      costs: Sequence[int] | None = None) -> tuple[list[str], int]:
    """(lines, number of dropped turns) whose estimated size stays within `cap_tokens`.
    `before` counts older turns left out of `turns`; they are dropped with the others.
    `costs` (each turn's `turn_cost`, when the caller kept them) saves counting again."""
    if not turns:
        return [], 0
    *older, (latest_index, latest) = turns
    latest_cost = costs[-1] if costs is not None else turn_cost(latest, count)
    budget = cap_tokens - latest_cost
    kept: list[tuple[int, list[str]]] = []
    for at in range(len(older) - 1, -1, -1):
        index, lines = older[at]
        cost = costs[at] if costs is not None else turn_cost(lines, count)
        if cost > budget:
            break
        kept.append((index, lines))
        budget -= cost
    kept.reverse()
    dropped = older[: len(older) - len(kept)]
    out: list[str] = []
    if dropped or before.count:
        first = before.first if before.count else dropped[0][0]
        last = dropped[-1][0] if dropped else before.last
        out.append(f"[{before.count + len(dropped)} older turns dropped (turns {first}-{last})]")
    for _, lines in kept:
        out.extend(lines)
    if latest_cost > cap_tokens:
        latest = _clip_turn(latest, cap_tokens, count)
    out.extend(latest)
    return out, before.count + len(dropped)


def _clip_turn(lines: list[str], cap_tokens: int, count: Callable[[str], int]) -> list[str]:
    """Clip the longest lines first until the turn fits; the first (user) line goes last."""
    lines = list(lines)
    per_line_floor = max(8, cap_tokens // (2 * max(1, len(lines))))
    order = sorted(range(len(lines)), key=lambda i: (i == 0, -count(lines[i])))
    for i in order:
        total = sum(count(line) + 1 for line in lines)
        if total <= cap_tokens:
            break
        excess = total - cap_tokens
        lines[i] = _clip(lines[i], max(per_line_floor, count(lines[i]) - excess), count)
    return lines
