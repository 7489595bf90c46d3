"""The mutable breaker state: one record per provider id, grouped in per-session partitions."""

from __future__ import annotations

from collections.abc import Sequence

import attrs


@attrs.define
class BreakerRecord:
    """One provider's breaker inside one partition.

    `ladder_step` is the index into the cooldown ladder used by the last trip (-1 =
    never tripped in the current failure window).
    """

    failures: int = 0
    ladder_step: int = -1
    cooldown_until_ms: float = 0.0
    last_failure_ms: float | None = None

    def reset(self) -> None:
        self.failures, self.ladder_step, self.cooldown_until_ms, self.last_failure_ms = 0, -1, 0.0, None

    def expire(self, now_ms: float, window_ms: int) -> None:
        """Forget counter and ladder step after a whole failure window without a new failure."""
        if self.last_failure_ms is not None and now_ms - self.last_failure_ms >= window_ms:
            self.reset()

    def cooling(self, now_ms: float) -> bool:
        return now_ms < self.cooldown_until_ms

    def count(self, now_ms: float) -> int:
        self.failures += 1
        self.last_failure_ms = now_ms
        return self.failures

    def trip(self, now_ms: float, ladder: Sequence[int]) -> int:
        """Arm (or escalate) the cooldown; returns the cooldown applied, in ms."""
        self.ladder_step = min(self.ladder_step + 1, len(ladder) - 1)
        cooldown = ladder[self.ladder_step]
        self.cooldown_until_ms = now_ms + cooldown
        self.failures = 0
        self.last_failure_ms = now_ms
        return cooldown


@attrs.define
class Partition:
    """What one session (or the keyless default) knows: where it is pinned and its breakers."""

    override_id: str | None = None
    last_probe_ms: float | None = None
    breakers: dict[str, BreakerRecord] = attrs.field(factory=dict)

    def breaker(self, provider_id: str) -> BreakerRecord:
        record = self.breakers.get(provider_id)
        if record is None:
            record = self.breakers[provider_id] = BreakerRecord()
        return record
