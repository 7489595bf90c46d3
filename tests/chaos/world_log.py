"""Append-only JSON-lines logs that live outside sessions.sqlite: the independent records.

The side-effect log is what the world saw; the acknowledgement log is what callers were
told. Each append is one O_APPEND write (atomic for short lines) and, when `fsync` is on,
is on disk before the caller goes on — so a killed process leaves every line it finished.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class JsonLog:
    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync

    def append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, sort_keys=True) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            if line.strip():
                out.append(json.loads(line))  # a torn last line would be a harness bug: fail loudly
        return out
