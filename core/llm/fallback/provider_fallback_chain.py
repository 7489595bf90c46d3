"""ProviderFallbackChain: decides which link serves a completion, and learns from the outcome.

State is partitioned by session id (the keyless default is one shared partition), so one
session's success never clears another's armed cooldown. After a switch the partition is
pinned to the working link (sticky); the primary is retried only as a throttled probe
once its cooldown has elapsed. Time is read from the clock at each decision, never from a
timer: with no turns there is nothing to probe for.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import attrs

from atomic_agent.llm.fallback.breaker_state import BreakerRecord, Partition
from atomic_agent.llm.fallback.should_advance import AdvanceSignal
from atomic_agent.llm.fallback.switch_notice import SwitchNotice
from atomic_agent.providers.llm_config import FallbackConfig


PARTITIONS_KEPT = 4096


def monotonic_ms() -> float:
    return time.monotonic() * 1000.0


@attrs.frozen
class ChainPick:
    """The link chosen for this completion; `probe` marks a trial return to the primary."""

    provider_id: str
    probe: bool = False
    override_id: str | None = None


class ProviderFallbackChain:
    def __init__(self, links: Sequence[str], settings: FallbackConfig | None = None,
                 clock_ms: Callable[[], float] = monotonic_ms) -> None:
        if not links:
            raise ValueError("a fallback chain needs at least one provider id (the primary)")
        self.settings = settings or FallbackConfig()
        self._links = tuple(links)
        self._clock = clock_ms
        # bounded: a server that starts a session per request must not keep one partition per session for ever
        self._partitions: OrderedDict[str | None, Partition] = OrderedDict()

    @property
    def links(self) -> tuple[str, ...]:
        return self._links

    @property
    def primary(self) -> str:
        return self._links[0]

    def reprime(self, links: Sequence[str]) -> None:
        """A new chain (e.g. after a hot-swap): every partition drops its override."""
        if not links:
            raise ValueError("a fallback chain needs at least one provider id (the primary)")
        self._links = tuple(links)
        for partition in self._partitions.values():
            partition.override_id = None
            partition.last_probe_ms = None

    # -- inspection (tests, status) -------------------------------------------------------------
    def partition(self, session_id: str | None = None) -> Partition:
        """The session's breaker partition; the least recently used beyond PARTITIONS_KEPT are
        forgotten (an idle session's breaker state starts over, as after a restart)."""
        found = self._partitions.get(session_id)
        if found is None:
            found = self._partitions[session_id] = Partition()
            while len(self._partitions) > PARTITIONS_KEPT:
                self._partitions.popitem(last=False)
        else:
            self._partitions.move_to_end(session_id)
        return found

    def breaker(self, provider_id: str, session_id: str | None = None) -> BreakerRecord:
        return self.partition(session_id).breaker(provider_id)

    def override(self, session_id: str | None = None) -> str | None:
        return self.partition(session_id).override_id

    # -- decisions --------------------------------------------------------------------------------
    def pick(self, session_id: str | None = None) -> ChainPick:
        now = self._clock()
        part = self.partition(session_id)
        for record in part.breakers.values():
            record.expire(now, self.settings.failure_window_ms)
        override = part.override_id if part.override_id in self._links else None
        part.override_id = override
        if override is None or override == self.primary:
            part.override_id = None
            return ChainPick(self.primary)
        primary = part.breaker(self.primary)
        throttle_passed = (part.last_probe_ms is None
                           or now - part.last_probe_ms >= self.settings.probe_throttle_ms)
        if not primary.cooling(now) and throttle_passed:
            part.last_probe_ms = now
            return ChainPick(self.primary, probe=True, override_id=override)
        return ChainPick(override, override_id=override)

    def candidates(self, pick: ChainPick, session_id: str | None = None) -> list[str]:
        """The picked link, then (for a probe) the pinned link, then the rest not cooling down."""
        now = self._clock()
        part = self.partition(session_id)
        order = [pick.provider_id]
        if pick.probe and pick.override_id is not None:
            order.append(pick.override_id)
        start = self._links.index(order[-1]) if order[-1] in self._links else 0
        rest = [*self._links[start + 1:], *self._links[:start]]
        for pid in rest:
            if pid not in order and not part.breaker(pid).cooling(now):
                order.append(pid)
        return order

    def record_failure(self, session_id: str | None, provider_id: str, signal: AdvanceSignal,
                       pick: ChainPick) -> bool:
        """Learn from a failed attempt; True means "try the next candidate now"."""
        now = self._clock()
        record = self.partition(session_id).breaker(provider_id)
        if pick.probe and provider_id == self.primary:
            record.trip(now, self.settings.cooldown_ms)  # still down: escalate, stay pinned
            return True
        if signal == "immediate":
            record.trip(now, self.settings.cooldown_ms)
            return True
        if record.count(now) >= self.settings.failure_threshold:
            record.trip(now, self.settings.cooldown_ms)
            return True
        return False

    def record_success(self, session_id: str | None, provider_id: str, pick: ChainPick,
                       reason: str = "") -> SwitchNotice | None:
        """Learn from a served attempt; returns the notice when the partition changed state."""
        part = self.partition(session_id)
        record = part.breaker(provider_id)
        if provider_id == self.primary:
            if part.override_id is None:
                record.failures = 0
                return None
            previous, part.override_id = part.override_id, None
            record.reset()
            return SwitchNotice("back", previous, provider_id, "primary recovered (probe succeeded)", session_id)
        record.failures = 0
        if part.override_id == provider_id:
            return None  # sticky: no new transition
        previous = part.override_id or self.primary
        part.override_id = provider_id
        return SwitchNotice("away", previous, provider_id, reason or "previous provider failed", session_id)
