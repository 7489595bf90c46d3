"""The one validator every profile write passes (tools, reflection, CLI): no second door."""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from .memory_errors import MemoryValidationError

KEY_MAX_CHARS = 64
VALUE_MAX_CHARS = 200  # the reflection grammar's value bound
MAX_KEYWORDS = 10
KEYWORD_MAX_CHARS = 32
KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.\-]{0,63}$")
SOURCE_PATTERN = re.compile(r"^[a-z][a-z0-9_\-]{0,31}$")


@attrs.frozen
class ValidFact:
    key: str
    value: str
    pinned: bool
    keywords: tuple[str, ...]
    supersedes_key: str | None
    source: str


def normalize_key(key: object, what: str = "key") -> str:
    if not isinstance(key, str) or not key.strip():
        raise MemoryValidationError(f"profile {what} must be a non-empty string such as preferred_language")
    norm = key.strip().lower()
    if len(norm) > KEY_MAX_CHARS:
        raise MemoryValidationError(f"profile {what} {norm[:20]!r}... is {len(norm)} characters; "
                                    f"use at most {KEY_MAX_CHARS}")
    if not KEY_PATTERN.match(norm):
        raise MemoryValidationError(f"profile {what} {norm!r} may hold only letters, digits, '_', '.' and '-' "
                                    "and must start with a letter or digit (e.g. preferred_language)")
    return norm


def is_valid_profile_key(key: object) -> bool:
    """True when `key` passes the same key rule `validate_fact` applies (for parsers)."""
    try:
        normalize_key(key)
    except MemoryValidationError:
        return False
    return True


def normalize_keywords(keywords: Iterable[object] | None) -> tuple[str, ...]:
    if keywords is None:
        return ()
    if isinstance(keywords, str):
        keywords = keywords.split(",")
    out: list[str] = []
    for raw in keywords:
        if not isinstance(raw, str):
            raise MemoryValidationError(f"profile keywords must be strings, got {raw!r}")
        word = " ".join(raw.split()).lower()
        if not word:
            continue
        if len(word) > KEYWORD_MAX_CHARS or "," in word:
            raise MemoryValidationError(f"profile keyword {word[:40]!r} must be at most {KEYWORD_MAX_CHARS} "
                                        "characters without commas")
        if word not in out:
            out.append(word)
    if len(out) > MAX_KEYWORDS:
        raise MemoryValidationError(f"a profile fact takes at most {MAX_KEYWORDS} keywords, got {len(out)}")
    return tuple(out)


def validate_fact(key: object, value: object, pinned: object = True, keywords: Iterable[object] | None = None,
                  supersedes_key: object = None, source: str = "tool") -> ValidFact:
    norm_key = normalize_key(key)
    if not isinstance(value, str) or not value.strip():
        raise MemoryValidationError(f"profile value for {norm_key!r} must be a non-empty string")
    norm_value = value.strip()
    if "\n" in norm_value or "\r" in norm_value:
        raise MemoryValidationError(f"profile value for {norm_key!r} must be one line; store longer text as a note")
    if len(norm_value) > VALUE_MAX_CHARS:
        raise MemoryValidationError(f"profile value for {norm_key!r} is {len(norm_value)} characters; use at most "
                                    f"{VALUE_MAX_CHARS}, or store the detail as a note")
    if not isinstance(pinned, bool):
        raise MemoryValidationError(f"pinned must be true or false, got {pinned!r}")
    words = normalize_keywords(keywords)
    if not pinned and not words:
        raise MemoryValidationError(f"contextual fact {norm_key!r} (pinned=false) needs keywords, or it is never "
                                    "shown; pass keywords or leave it pinned")
    sup = None if supersedes_key in (None, "") else normalize_key(supersedes_key, "supersedes key")
    if sup == norm_key:
        sup = None  # same-key supersession happens anyway
    if not isinstance(source, str) or not SOURCE_PATTERN.match(source):
        raise MemoryValidationError(f"profile source {source!r} must be a short lowercase word such as tool")
    return ValidFact(norm_key, norm_value, pinned, words, sup, source)
