"""Small JSON files in the state dir that are an optimisation, never a requirement.

Reads of a missing or corrupt file give None (start cold); writes go to a temp file in
the same directory and are renamed over the target, and a failed write is swallowed —
persistence must never fail a search.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def load_state(path: Path | None) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return raw if isinstance(raw, dict) else None


def save_state(path: Path | None, data: dict[str, Any]) -> bool:
    """True when written. Concurrent writers race benignly: the last rename wins."""
    if path is None:
        return False
    tmp_name = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False)
        os.replace(tmp_name, path)
        return True
    except (OSError, TypeError, ValueError):
        if tmp_name:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)
        return False
