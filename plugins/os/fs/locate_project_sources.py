"""Where os.fs.locate_project looks, and nowhere else (no disk-wide scans, ever):
the cwd and its ancestors, the working dirs of recent sessions (a column-only query),
and the direct children of the configured `projects.roots`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

CWD, HISTORY, ROOT, DIRECT = "cwd", "session-history", "configured-root", "direct-path"
MAX_ANCESTORS = 32
RECENT_SESSIONS = 200
ROOT_CAP = 500  # eligible directories per root
SKIPPED_NAMES = ("node_modules", "__pycache__")


@attrs.frozen
class Candidate:
    path: Path
    source: str


@attrs.define
class RootScan:
    scanned: int = 0
    invalid: list[str] = attrs.field(factory=list)
    unreadable: list[str] = attrs.field(factory=list)
    truncated: list[str] = attrs.field(factory=list)


def cwd_chain(working_dir: Path) -> list[Candidate]:
    current = Path(working_dir)
    out = [Candidate(current, CWD)]
    for parent in list(current.parents)[:MAX_ANCESTORS]:
        if parent == Path(parent.anchor):
            break
        out.append(Candidate(parent, CWD))
    return out


def recent_session_dirs(store: Any, limit: int = RECENT_SESSIONS) -> list[Candidate]:
    """Working dirs of recent sessions, newest first, deleted dirs dropped."""
    if store is None:
        return []
    rows = store.recent_working_dirs(limit)
    seen, out = set(), []
    for raw in rows:
        if not raw or raw in seen:
            continue
        seen.add(raw)
        if os.path.isdir(raw):
            out.append(Candidate(Path(raw), HISTORY))
    return out


def _eligible(entry: os.DirEntry[str]) -> bool:
    if entry.name.startswith(".") or entry.name in SKIPPED_NAMES or entry.is_symlink():
        return False
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


async def root_children(roots: Sequence[str], scan: RootScan, cancelled: asyncio.Event | None) -> list[Candidate]:
    out: list[Candidate] = []
    for raw in roots:
        if cancelled is not None and cancelled.is_set():
            break
        expanded = os.path.expanduser(raw.strip()) if isinstance(raw, str) else ""
        if not expanded or not os.path.isabs(expanded):
            scan.invalid.append(str(raw))
            continue
        try:
            children = await asyncio.to_thread(_scan_one, Path(expanded), cancelled)
        except OSError:
            scan.unreadable.append(expanded)
            continue
        scan.scanned += 1
        found, truncated = children
        if truncated:
            scan.truncated.append(expanded)
        out.extend(Candidate(p, ROOT) for p in found)
    return out


def _scan_one(root: Path, cancelled: asyncio.Event | None) -> tuple[list[Path], bool]:
    found: list[Path] = []
    with os.scandir(root) as it:  # streamed; stops at the cap, never lists a huge root whole
        for entry in it:
            if cancelled is not None and cancelled.is_set():
                break
            if _eligible(entry):
                found.append(Path(entry.path))
                if len(found) >= ROOT_CAP:
                    return found, True
    return found, False

