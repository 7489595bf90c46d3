"""Is a file text or binary, and what kind of binary (for an honest one-line report)."""

from __future__ import annotations

from pathlib import Path

SNIFF_BYTES = 8192
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF8", "GIF image"),
    (b"%PDF-", "PDF document (use os.fs.read_document)"), (b"PK\x03\x04", "zip container (use os.fs.archive.list or os.fs.read_document)"),
    (b"\x1f\x8b", "gzip data (use os.fs.archive.list)"), (b"\x7fELF", "ELF executable"), (b"MZ", "Windows executable"),
    (b"SQLite format 3\x00", "SQLite database"), (b"\xfd7zXZ\x00", "xz data"), (b"BZh", "bzip2 data"),
    (b"{\\rtf", "RTF document (use os.fs.read_document)"), (b"\xd0\xcf\x11\xe0", "legacy Office document"),
    (b"RIFF", "RIFF media (WAV/AVI/WebP)"), (b"OggS", "Ogg media"), (b"\x00\x00\x01\x00", "icon"),
)


def looks_binary(sample: bytes) -> bool:
    """A NUL byte in the first block means binary (the rule git and ripgrep use)."""
    return b"\x00" in sample[:SNIFF_BYTES]


def binary_kind(sample: bytes) -> str:
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    if sample.startswith(b"\xff\xfe") or sample.startswith(b"\xfe\xff"):
        return "UTF-16 text (not readable as UTF-8)"
    return "binary data"


def read_sample(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(SNIFF_BYTES)
