"""The wait before a task's next attempt: exponential, capped."""

from __future__ import annotations


def next_delay_ms(attempts: int, initial_ms: int, max_ms: int) -> int:
    """After attempt `attempts` (1-based) failed: initial, 2x, 4x, ... never above `max_ms`."""
    exponent = max(attempts - 1, 0)
    if exponent >= 62:  # 2**62 ms outlives any cap
        return max_ms
    return min(initial_ms * (1 << exponent), max_ms)
