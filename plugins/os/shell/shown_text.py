"""Render untrusted text for a prompt or an approval line so it stays data.

Output is fenced with a backtick run longer than any inside it, so a tool output
containing "```" or fake framing cannot close the block early; approval lines escape
control characters so a carriage return or an ANSI sequence cannot repaint the prompt.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


def fenced(text: str, label: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{label}:\n{fence}\n{body}{fence}"


def escape_for_prompt(text: str, limit: int = 400) -> str:
    """One line: control characters shown as \\xNN, newlines as \\n, long text cut with a count."""
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\n", "\\n").replace("\r", "\\r"))
    if len(shown) > limit:
        shown = f"{shown[:limit]}… (+{len(shown) - limit} more chars)"
    return shown


def excerpt(text: str, budget: int) -> str:
    """Head and tail of `text` within `budget` chars, with the gap marked."""
    if len(text) <= budget:
        return text
    head = budget * 3 // 5
    tail = budget - head
    return f"{text[:head]}\n…[{len(text) - budget} chars not shown]…\n{text[-tail:]}"
