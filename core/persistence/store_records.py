"""Records the store hands back: a stream record and a key-value pair."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class StreamRecord:
    """One append-only record: `seq` is 1, 2, 3, ... per stream and is never reused, even after
    a compaction dropped older records."""

    stream: str
    seq: int
    value: Any
    written_at: float


@attrs.frozen
class KeyValue:
    key: str
    value: Any


@attrs.frozen
class ChangeSet:
    """What one commit changed, as seen by a notifier: stream names and keys."""

    streams: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.streams or self.keys)
