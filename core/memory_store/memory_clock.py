"""The memory stores' clock: epoch milliseconds.

Looked up through this module at call time (never bound as a default argument) so tests can
freeze it with one monkeypatch and compare database files byte for byte.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    return time.time_ns() // 1_000_000
