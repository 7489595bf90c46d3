"""Parse `--numstat -z` output: per-file added/deleted line counts (binary files marked)."""

from __future__ import annotations

from typing import Any


def parse_numstat(text: str) -> list[dict[str, Any]]:
    files: list[dict[str, Any]] = []
    fields = text.split("\0")
    i = 0
    while i < len(fields):
        record = fields[i].lstrip("\n")
        i += 1
        if not record:
            continue
        parts = record.split("\t", 2)
        if len(parts) < 3:
            continue
        added, deleted, path = parts
        entry: dict[str, Any] = {"path": path, "binary": added == "-"}
        entry["added"] = None if added == "-" else int(added)
        entry["deleted"] = None if deleted == "-" else int(deleted)
        if path == "" and i + 1 < len(fields):  # a rename: "\0old\0new"
            entry["origPath"], entry["path"] = fields[i], fields[i + 1]
            i += 2
        files.append(entry)
    return files


def numstat_summary(files: list[dict[str, Any]], limit: int = 40) -> str:
    if not files:
        return "no changes"
    added = sum(f["added"] or 0 for f in files)
    deleted = sum(f["deleted"] or 0 for f in files)
    lines = [f"{len(files)} files changed, +{added} -{deleted}"]
    for f in files[:limit]:
        stat = "binary" if f["binary"] else f"+{f['added']} -{f['deleted']}"
        moved = f" (from {f['origPath']})" if f.get("origPath") else ""
        lines.append(f"  {stat} {f['path']}{moved}")
    if len(files) > limit:
        lines.append(f"  … {len(files) - limit} more")
    return "\n".join(lines)
