"""The timestamps the session state stores: UTC ISO-8601 with milliseconds, so rows written
by any backend or process compare and sort the same way."""

from __future__ import annotations

from datetime import datetime, timezone


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
