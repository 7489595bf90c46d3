"""Split outbound text into Telegram-sized chunks.

Telegram counts a message's length in UTF-16 code units (4,096 at most). Chunks are cut
at the last line break that fits, else at the last space, else hard — and never inside a
surrogate pair: Python strings hold code points, so every cut is on a code-point boundary
by construction and a character outside the BMP (an emoji) counts as two units.
"""

from __future__ import annotations

MAX_UNITS = 4096


def utf16_units(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def chunk_text(text: str, limit: int = MAX_UNITS) -> list[str]:
    """Chunks of at most `limit` UTF-16 units whose concatenation is `text` (after the line
    breaks a cut lands on are dropped from the chunk start)."""
    if limit < 2:
        raise ValueError("limit must leave room for one surrogate pair")
    chunks: list[str] = []
    rest = text
    while utf16_units(rest) > limit:
        fit = _fitting_prefix(rest, limit)
        cut = rest.rfind("\n", 0, fit + 1)
        if cut <= 0:
            cut = rest.rfind(" ", 0, fit + 1)
        if cut <= 0:
            cut = fit
        chunks.append(rest[:cut])
        rest = rest[cut:]
        if rest[:1] == "\n":
            rest = rest[1:]
    if rest or not chunks:
        chunks.append(rest)
    return chunks


def _fitting_prefix(text: str, limit: int) -> int:
    """The number of code points of `text` that fit in `limit` UTF-16 units."""
    units = 0
    for index, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)
