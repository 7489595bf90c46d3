"""The fixed `git for-each-ref` format for branches and its parser."""

from __future__ import annotations

from typing import Any

BRANCH_FORMAT = ("%(refname)%1f%(refname:short)%1f%(objectname:short)%1f%(upstream:short)%1f"
                 "%(upstream:track)%1f%(HEAD)%1f%(committerdate:iso-strict)%1f%(subject)")


def parse_branches(text: str) -> list[dict[str, Any]]:
    branches = []
    for line in text.splitlines():
        parts = line.split("\x1f")
        if len(parts) < 8:
            continue
        ref, name, sha, upstream, track, head, date, subject = parts[:8]
        if ref.endswith("/HEAD") and ref.startswith("refs/remotes/"):
            continue  # origin/HEAD is an alias, not a branch
        branches.append({"name": name, "remote": ref.startswith("refs/remotes/"), "sha": sha,
                         "upstream": upstream or None, "track": track.strip("[]") or None,
                         "current": head == "*", "date": date, "subject": subject})
    return branches


def branch_summary(branches: list[dict[str, Any]], limit: int = 50) -> str:
    if not branches:
        return "no branches (a repository without commits)"
    lines = []
    for b in branches[:limit]:
        mark = "*" if b["current"] else " "
        extra = f" [{b['upstream']}{': ' + b['track'] if b['track'] else ''}]" if b["upstream"] else ""
        lines.append(f"{mark} {b['name']} {b['sha']}{extra} {b['subject']}")
    if len(branches) > limit:
        lines.append(f"… {len(branches) - limit} more")
    return "\n".join(lines)
