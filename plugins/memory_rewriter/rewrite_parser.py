"""Read the rewriter's answer: the envelope's body, clamped to `max_chars` on a word
boundary, or None for NONE, an empty body, or anything malformed (the caller then
recalls with the raw message only)."""

from __future__ import annotations

import re

import attrs

_ENVELOPE = re.compile(r"<rewritten_query>(.*?)(?:</rewritten_query>|$)", re.IGNORECASE | re.DOTALL)


@attrs.frozen
class ParsedRewrite:
    query: str | None
    reason: str  # ok | clamped | none | empty | malformed


def parse_rewrite(text: str, max_chars: int) -> ParsedRewrite:
    flat = text.strip()
    if re.fullmatch(r"NONE[.!]?", flat, re.IGNORECASE):
        return ParsedRewrite(None, "none")
    found = _ENVELOPE.search(flat)
    if found is None:
        return ParsedRewrite(None, "malformed")
    body = " ".join(found.group(1).split())
    if not body or not re.search(r"\w", body):
        return ParsedRewrite(None, "empty")
    if len(body) <= max_chars:
        return ParsedRewrite(body, "ok")
    cut = body[:max_chars]
    space = cut.rfind(" ")
    return ParsedRewrite((cut[:space] if space > max_chars // 2 else cut).rstrip(), "clamped")
