"""Find one entry-point group's entries by reading installed distributions' metadata files.

`importlib.metadata` answers the same question, but importing it pulls in email, zipfile
and csv and it parses every distribution's metadata; every `atomic-agent` start (even
`--help`) pays that. This reads only what the plugin host needs: each `*.dist-info` /
`*.egg-info` directory on `sys.path` (first one wins per normalized name, as
importlib.metadata does), its `entry_points.txt` section for the group, and — for the
distributions that have an entry in it — the Name/Version header lines.

A `sys.path` entry that is not a plain directory (a zip or an egg file) makes `scan`
return None; the caller then asks importlib.metadata, which understands those.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

_SUFFIXES = (".dist-info", ".egg-info")
_ENTRY = re.compile(r"^(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$")


@attrs.frozen
class FoundEntryPoint:
    """One entry of the group: `name = value` from `dist_name` `dist_version`'s entry_points.txt."""

    name: str
    value: str
    dist_name: str
    dist_version: str

    def load(self) -> Any:
        """Import the module the value names and resolve its attribute path (as EntryPoint.load)."""
        match = _ENTRY.match(self.value)
        if match is None:
            raise ValueError(f"entry point {self.name!r} has a malformed value {self.value!r}")
        target: Any = importlib.import_module(match.group("module"))
        for part in (match.group("attr") or "").split("."):
            if part:
                target = getattr(target, part)
        return target


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def scan(group: str, path: Sequence[str] | None = None) -> list[FoundEntryPoint] | None:
    """Every entry of `group` on `path` (default sys.path), or None when some path entry
    is an archive this reader does not open."""
    seen: set[str] = set()
    found: list[FoundEntryPoint] = []
    for entry in sys.path if path is None else path:
        folder = entry or "."
        if os.path.isfile(folder):
            return None
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue  # a missing or unreadable path entry holds no distributions (as importlib's)
        for item in names:
            if not item.endswith(_SUFFIXES):
                continue
            key = normalized(item.rsplit(".", 1)[0].split("-", 1)[0])
            if key in seen:
                continue
            seen.add(key)
            info = Path(folder) / item
            entries = _group_entries(info / "entry_points.txt", group)
            if entries:
                dist_name, dist_version = _name_and_version(info)
                found.extend(FoundEntryPoint(name, value, dist_name, dist_version) for name, value in entries)
    return found


def _group_entries(path: Path, group: str) -> list[tuple[str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    entries: list[tuple[str, str]] = []
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            continue
        if current == group and "=" in line:
            name, value = line.split("=", 1)
            entries.append((name.strip(), value.strip()))
    return entries


def _name_and_version(info: Path) -> tuple[str, str]:
    """The Name and Version headers of METADATA (dist-info) or PKG-INFO (egg-info)."""
    for file_name in ("METADATA", "PKG-INFO"):
        try:
            with open(info / file_name, encoding="utf-8", errors="replace") as handle:
                headers: dict[str, str] = {}
                for line in handle:
                    if not line.strip():
                        break  # the body starts after the first blank line
                    key, _, value = line.partition(":")
                    if key in ("Name", "Version") and key not in headers:
                        headers[key] = value.strip()
                return headers.get("Name", ""), headers.get("Version", "")
        except OSError:
            continue
    return "", ""
