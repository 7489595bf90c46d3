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
    breaks a cut lands on are dropped from the chunk start). Linear in the text's length."""
    if limit < 2:
        raise ValueError("limit must leave room for one surrogate pair")
    chunks: list[str] = []
    start = 0
    end = _fitting_end(text, start, limit)
    while end < len(text):
        cut = text.rfind("\n", start + 1, end + 1)
        if cut <= start:
            cut = text.rfind(" ", start + 1, end + 1)
        if cut <= start:
            cut = end
        chunks.append(text[start:cut])
        start = cut + 1 if text[cut:cut + 1] == "\n" else cut
        end = _fitting_end(text, start, limit)
    chunks.append(text[start:])
    return chunks


def _fitting_end(text: str, start: int, limit: int) -> int:
    """The index after the longest run of `text` from `start` that fits in `limit` UTF-16
    units (len(text) when the rest fits)."""
    end = min(len(text), start + limit)  # `limit` code points are at least `limit` units
    units = utf16_units(text[start:end])
    while units > limit:  # astral characters count twice: give back from the end
        end -= 1
        units -= 2 if ord(text[end]) > 0xFFFF else 1
    return end
