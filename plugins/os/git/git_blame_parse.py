"""Parse `git blame --porcelain` into one record per line."""

from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^([0-9a-f]{7,64}) (\d+) (\d+)(?: (\d+))?$")


def parse_blame(text: str) -> list[dict[str, Any]]:
    commits: dict[str, dict[str, str]] = {}
    lines: list[dict[str, Any]] = []
    current: tuple[str, int] | None = None
    for raw in text.split("\n"):
        if current is None:
            match = _HEADER.match(raw)
            if match:
                current = (match.group(1), int(match.group(3)))
                commits.setdefault(match.group(1), {})
            continue
        sha, line_no = current
        if raw.startswith("\t"):
            meta = commits[sha]
            lines.append({"line": line_no, "sha": sha, "author": meta.get("author", ""),
                          "time": int(meta["author-time"]) if meta.get("author-time", "").isdigit() else None,
                          "summary": meta.get("summary", ""), "text": raw[1:]})
            current = None
            continue
        key, _, value = raw.partition(" ")
        commits[sha][key] = value
    return lines


def blame_summary(lines: list[dict[str, Any]], limit: int = 60) -> str:
    if not lines:
        return "no lines"
    shown = [f"{ln['line']:>5} {ln['sha'][:8]} {ln['author'][:16]:<16} {ln['text']}" for ln in lines[:limit]]
    if len(lines) > limit:
        shown.append(f"… {len(lines) - limit} more lines")
    return "\n".join(shown)
