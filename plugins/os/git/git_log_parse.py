"""The fixed `git log` format and its parser (unit/record separators, never in commit text)."""

from __future__ import annotations

from typing import Any

LOG_FIELDS = ("sha", "shortSha", "author", "email", "date", "parents", "subject", "body")
LOG_FORMAT = "%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%P%x1f%s%x1f%b%x1e"


def parse_log(text: str) -> list[dict[str, Any]]:
    commits = []
    for record in text.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        values = record.split("\x1f")
        if len(values) < len(LOG_FIELDS):
            continue  # a record cut by the output cap
        commit: dict[str, Any] = dict(zip(LOG_FIELDS, values[: len(LOG_FIELDS)], strict=True))
        commit["parents"] = commit["parents"].split()
        commit["body"] = commit["body"].strip()
        commits.append(commit)
    return commits


def log_summary(commits: list[dict[str, Any]]) -> str:
    if not commits:
        return "no commits"
    return "\n".join(f"{c['shortSha']} {c['date'][:10]} {c['author']}: {c['subject']}" for c in commits)
