"""Escaping arbitrary text into GBNF literals (quoted strings and character classes)."""

from __future__ import annotations

import json

_NAMED_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Inside [...] these would change the class's meaning, so they are always escaped.
_CLASS_SPECIALS = frozenset("\\]^-[")


def _escape_char(char: str, specials: frozenset[str]) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if char in specials:
        return "\\" + char
    code = ord(char)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02X}"
    return char


def gbnf_string_literal(text: str) -> str:
    """`text` as a double-quoted GBNF literal that matches exactly those characters."""
    return '"' + "".join(_escape_char(char, frozenset()) for char in text) + '"'


def gbnf_excluding_class(chars: str) -> str:
    """A GBNF character class matching any single character except those in `chars`."""
    if not chars:
        raise ValueError("an excluding character class needs at least one character to exclude")
    unique = sorted(set(chars), key=chars.index)
    return "[^" + "".join(_escape_char(char, _CLASS_SPECIALS) for char in unique) + "]"


def json_string_literal(value: str) -> str:
    """A GBNF literal matching the JSON encoding of `value` (quotes included), e.g. "\\"os.fs.read\\""."""
    return gbnf_string_literal(json.dumps(value, ensure_ascii=False))
