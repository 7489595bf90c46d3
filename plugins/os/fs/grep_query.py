"""One grep request and its matches, shared by the ripgrep and the pure-Python searchers."""

from __future__ import annotations

from pathlib import Path

import attrs

TEXT_CHARS = 300  # characters of a matching line shown
MAX_FILE_BYTES = 50 * 1024 * 1024  # larger files are skipped by both searchers


@attrs.frozen
class GrepQuery:
    pattern: str
    root: Path
    glob: str | None = None
    ignore_case: bool = False
    fixed_strings: bool = False
    hidden: bool = False
    limit: int = 100


@attrs.frozen
class GrepMatch:
    path: str  # "/"-separated, relative to the root (the file name when root is a file)
    line: int
    text: str


@attrs.frozen
class GrepOutcome:
    matches: tuple[GrepMatch, ...]
    truncated: bool
    engine: str  # "ripgrep" | "python"
    files_searched: int | None = None


def clip_line(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "…"
