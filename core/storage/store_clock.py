"""The one clock of the state files: epoch milliseconds, and the UTC ISO-8601 text (with
milliseconds) rows store, so rows written by any store or process compare and sort alike.

Callers look `now_ms` up through this module at call time (never bound as a default
argument), so a test freezes every store with one monkeypatch and compares files byte for
byte.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso_ms(ms: int) -> str:
    """`ms` (epoch milliseconds) as UTC ISO-8601 with milliseconds, exactly."""
    seconds, millis = divmod(ms, 1000)
    return datetime.fromtimestamp(seconds, tz=timezone.utc).replace(microsecond=millis * 1000).isoformat(
        timespec="milliseconds")


def now_iso() -> str:
    return iso_ms(now_ms())
