"""The approval audit log: an append-only record of every approval decision, one JSON object per line.

It lives in the state dir (`audit/approvals.ndjson`, mode 0600) and records who decided
(the standing level, a session grant, the person, or nobody), what was asked (tool,
category, summary, command shape, binding fingerprint), the level in force and the grant
used or created. Lines are only ever appended.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

AUDIT_DIR = "audit"
AUDIT_FILE = "approvals.ndjson"
SUMMARY_CAP = 500
_CONTROL = re.compile(r"[\x00-\x1f\x7f]|\x1b\[[0-9;?]*[ -/]*[@-~]")


def audit_path(state_dir: Path) -> Path:
    return state_dir / AUDIT_DIR / AUDIT_FILE


def clean_summary(text: str) -> str:
    """A summary (model-written text) without control characters and capped, as logs and records keep it."""
    text = _CONTROL.sub(" ", text)
    return text if len(text) <= SUMMARY_CAP else text[:SUMMARY_CAP] + f"…[{len(text) - SUMMARY_CAP} more chars]"


def audit_entry(fields: Mapping[str, Any]) -> dict[str, Any]:
    """One decision as every backend's audit keeps it: the summary (model-written text) without
    control characters and capped; the time is added by where it is kept."""
    entry = dict(fields)
    if isinstance(entry.get("summary"), str):
        entry["summary"] = clean_summary(entry["summary"])
    return entry


class ApprovalAuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def append(self, **fields: Any) -> None:
        record = {"ts": datetime.now(timezone.utc).isoformat(timespec="milliseconds"), **audit_entry(fields)}
        line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8", "replace")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    def read(self) -> list[dict[str, Any]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a torn last line from a crash is skipped, not fatal
        return out
