"""Rate-limits loop warnings so one ongoing issue does not add a notice every step."""

from __future__ import annotations

from collections.abc import Hashable

# once a warning fired for an issue, it fires again only after this many more occurrences
LOOP_WARNING_BUCKET_SIZE = 5


class WarningBuckets:
    """Remembers, per issue key, the last bucket a warning was emitted for."""

    def __init__(self, bucket_size: int = LOOP_WARNING_BUCKET_SIZE) -> None:
        if bucket_size < 1:
            raise ValueError(f"bucket_size must be >= 1, got {bucket_size}")
        self._bucket_size = bucket_size
        self._emitted: dict[Hashable, int] = {}

    def should_emit(self, key: Hashable, count: int, threshold: int) -> bool:
        """True the first time `count` reaches `threshold` for `key`, then once per bucket."""
        if count < threshold:
            return False
        bucket = (count - threshold) // self._bucket_size
        last = self._emitted.get(key)
        if last is not None and bucket <= last:
            return False
        self._emitted[key] = bucket
        return True
