"""Recognising a GGUF file and hashing model files."""

from __future__ import annotations

import hashlib
from pathlib import Path

GGUF_MAGIC = b"GGUF"
_CHUNK = 1 << 20


def has_gguf_magic(path: Path) -> bool:
    """True when the file starts with the 4-byte GGUF magic."""
    try:
        with Path(path).open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def normalise_sha256(text: str) -> str:
    """A lower-case 64-hex digest; anything else is a ValueError naming the problem."""
    value = text.strip().lower()
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise ValueError(f"{text!r} is not a sha256 digest (expected 64 hex characters)")
    return value
