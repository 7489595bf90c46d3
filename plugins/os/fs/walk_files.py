"""A bounded, deterministic directory walk shared by glob and the pure-Python grep.

Entries are visited depth-first in name order (files and directories interleaved, the
order `rg --sort path` uses). Hidden entries and dependency caches are skipped unless
asked for, and symlinks are listed but never descended into, so a link to `/` or a link
loop cannot turn one call into a disk-wide scan.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import attrs

DEPENDENCY_DIRS = ("node_modules", "__pycache__")


@attrs.frozen
class WalkEntry:
    rel: str  # "/"-separated, relative to the root
    path: Path
    is_dir: bool
    is_link: bool


def is_skipped_name(name: str, hidden: bool) -> bool:
    return (not hidden and name.startswith(".")) or name in DEPENDENCY_DIRS


def walk(root: Path, hidden: bool = False, max_depth: int = 64) -> Iterator[WalkEntry]:
    """Every entry under `root` (not `root` itself)."""
    yield from _walk(root, "", hidden, max_depth)


def _walk(directory: Path, prefix: str, hidden: bool, depth_left: int) -> Iterator[WalkEntry]:
    try:
        with os.scandir(directory) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if is_skipped_name(entry.name, hidden):
            continue
        rel = f"{prefix}{entry.name}"
        is_link = entry.is_symlink()
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        yield WalkEntry(rel, Path(entry.path), is_dir, is_link)
        if is_dir and not is_link and depth_left > 1:
            yield from _walk(Path(entry.path), rel + "/", hidden, depth_left - 1)
