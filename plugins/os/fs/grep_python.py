"""Pure-Python grep with the same rules as the ripgrep path: hidden entries, node_modules and
__pycache__ skipped, symlinks not followed, binary files (NUL in the first block) and files
over 50 MiB skipped, paths in name order, lines streamed with a byte cap."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_agent.plugins.os.fs.glob_pattern import match_path
from atomic_agent.plugins.os.fs.grep_query import MAX_FILE_BYTES, GrepMatch, GrepOutcome, GrepQuery, clip_line
from atomic_agent.plugins.os.fs.text_sniff import looks_binary
from atomic_agent.plugins.os.fs.walk_files import walk

if TYPE_CHECKING:
    import asyncio

LINE_BYTES = 1 << 20


class GrepPatternError(ValueError):
    pass


def compile_query(query: GrepQuery) -> re.Pattern[str]:
    source = re.escape(query.pattern) if query.fixed_strings else query.pattern
    try:
        return re.compile(source, re.IGNORECASE if query.ignore_case else 0)
    except re.error as exc:
        raise GrepPatternError(f"invalid regular expression {query.pattern!r}: {exc}; "
                               "pass fixedStrings=true to search for the literal text") from None


def _files(query: GrepQuery) -> list[tuple[str, Path]]:
    if query.root.is_file():
        return [(query.root.name, query.root)]
    out = []
    for entry in walk(query.root, hidden=query.hidden):
        if entry.is_dir or entry.is_link:
            continue
        if query.glob and not match_path(entry.rel, query.glob, basename_if_no_slash=True):
            continue
        out.append((entry.rel, entry.path))
    return out


def search_python(query: GrepQuery, cancelled: asyncio.Event | None = None) -> GrepOutcome:
    regex = compile_query(query)
    matches: list[GrepMatch] = []
    searched = 0
    for rel, path in _files(query):
        if cancelled is not None and cancelled.is_set():  # polled from the worker thread: a read of a flag
            break
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            with open(path, "rb") as handle:
                if looks_binary(handle.read(8192)):
                    continue
                handle.seek(0)
                searched += 1
                lineno = 0
                while chunk := handle.readline(LINE_BYTES):
                    lineno += 1
                    if b"\x00" in chunk:
                        break  # binary past the first block: stop like ripgrep does
                    text = chunk.decode("utf-8", errors="replace")
                    if regex.search(text.rstrip("\r\n")):
                        if len(matches) >= query.limit:
                            return GrepOutcome(tuple(matches), True, "python", searched)
                        matches.append(GrepMatch(rel, lineno, clip_line(text)))
        except OSError:
            continue
    return GrepOutcome(tuple(matches), False, "python", searched)
