"""The MCP drift records of one host: the state dir's `mcp/tool-fingerprints.json`, one JSON
document `{"version": 1, "servers": {server: record}}`, written atomically and whole, and only
when a change left it different. One engine of drift_store's DriftRecords (the fleet's is
drift_table)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FILE_NAME = "tool-fingerprints.json"


def store_path(state_dir: Path) -> Path:
    return state_dir / "mcp" / FILE_NAME


class DriftFile:
    def __init__(self, state_dir: Path) -> None:
        self.path = store_path(state_dir)
        self.where = str(self.path)

    def read(self) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self._document()["servers"].items() if isinstance(v, dict)}

    @contextmanager
    def editing(self) -> Iterator[dict[str, Any]]:
        document = self._document()
        before = json.dumps(document, sort_keys=True)
        yield document["servers"]
        if json.dumps(document, sort_keys=True) != before:
            self._write(document)

    def replace(self, records: dict[str, dict[str, Any]]) -> None:
        """The file afresh with `records` (`storage migrate --to sqlite` fills a state dir)."""
        self._write({"version": 1, "servers": records})

    def _document(self) -> dict[str, Any]:
        """The file as kept; an absent or unreadable one is no records (every catalog is then
        seen for the first time, as when the operator adds a server)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {"version": 1, "servers": {}}
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            return {"version": 1, "servers": {}}
        return data

    def _write(self, document: dict[str, Any]) -> None:
        from atomic_agent.api import write_atomic

        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(document, indent=2, sort_keys=True) + "\n")
