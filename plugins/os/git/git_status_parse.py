"""Parse `git status --porcelain=v2 --branch -z` into records."""

from __future__ import annotations

from typing import Any

_STATE = {".": "unmodified", "M": "modified", "T": "type changed", "A": "added", "D": "deleted",
          "R": "renamed", "C": "copied", "U": "unmerged"}


def parse_status(text: str) -> dict[str, Any]:
    branch: dict[str, Any] = {}
    entries: list[dict[str, Any]] = []
    fields = text.split("\0")
    i = 0
    while i < len(fields):
        record = fields[i]
        i += 1
        if not record:
            continue
        if record.startswith("# "):
            key, _, value = record[2:].partition(" ")
            if key == "branch.oid":
                branch["oid"] = None if value == "(initial)" else value
            elif key == "branch.head":
                branch["head"] = None if value == "(detached)" else value
                branch["detached"] = value == "(detached)"
            elif key == "branch.upstream":
                branch["upstream"] = value
            elif key == "branch.ab":
                ahead, _, behind = value.partition(" ")
                branch["ahead"], branch["behind"] = int(ahead.lstrip("+")), int(behind.lstrip("-"))
            continue
        kind = record[0]
        if kind == "1":
            parts = record.split(" ", 8)
            entries.append(_entry("changed", parts[1], parts[8]))
        elif kind == "2":
            parts = record.split(" ", 9)
            entry = _entry("renamed", parts[1], parts[9])
            entry["origPath"] = fields[i] if i < len(fields) else ""
            i += 1
            entries.append(entry)
        elif kind == "u":
            parts = record.split(" ", 10)
            entries.append(_entry("unmerged", parts[1], parts[10]))
        elif kind == "?":
            entries.append({"kind": "untracked", "path": record[2:]})
        elif kind == "!":
            entries.append({"kind": "ignored", "path": record[2:]})
    return {"branch": branch, "entries": entries}


def _entry(kind: str, xy: str, path: str) -> dict[str, Any]:
    return {"kind": kind, "path": path, "index": _STATE.get(xy[0], xy[0]), "worktree": _STATE.get(xy[1], xy[1])}


def status_summary(parsed: dict[str, Any], limit: int = 30) -> str:
    branch = parsed["branch"]
    entries = parsed["entries"]
    head = "detached HEAD" if branch.get("detached") else f"branch {branch.get('head') or '?'}"
    line = f"On {head}"
    if branch.get("upstream"):
        line += f" tracking {branch['upstream']} (ahead {branch.get('ahead', 0)}, behind {branch.get('behind', 0)})"
    if branch.get("oid") is None and "oid" in branch:
        line += " (no commits yet)"
    staged = sum(1 for e in entries if e.get("index") not in (None, "unmodified"))
    unstaged = sum(1 for e in entries if e.get("worktree") not in (None, "unmodified"))
    untracked = sum(1 for e in entries if e["kind"] == "untracked")
    conflicts = sum(1 for e in entries if e["kind"] == "unmerged")
    if not entries:
        return line + "\nworking tree clean"
    lines = [line, f"{staged} staged, {unstaged} unstaged, {untracked} untracked"
             + (f", {conflicts} conflicted" if conflicts else "")]
    for entry in entries[:limit]:
        if entry["kind"] in ("untracked", "ignored"):
            lines.append(f"  {entry['kind']}: {entry['path']}")
        else:
            moved = f" (from {entry['origPath']})" if entry.get("origPath") else ""
            lines.append(f"  index {entry['index']}, worktree {entry['worktree']}: {entry['path']}{moved}")
    if len(entries) > limit:
        lines.append(f"  … {len(entries) - limit} more")
    return "\n".join(lines)
