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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, TypeVar

import attrs

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.providers.llm_config import FallbackConfig
from atomic_agent.reliability.failure_taxonomy import (
    LlmFailure,
    TransportError,
    TurnCancelledError,
    classify_failure,
    is_cancellation,
)

# The provider_switched notice: one per state transition of a partition, never on sticky turns.

PROVIDER_SWITCHED = "provider_switched"
Direction = Literal["away", "back"]


@attrs.frozen
class SwitchNotice:
    direction: Direction
    from_id: str
    to_id: str
    reason: str
    session_id: str | None = None

    def as_event(self) -> dict[str, Any]:
        """The loop event: {type: provider_switched, direction, from, to, reason, sessionId}."""
        event: dict[str, Any] = {"type": PROVIDER_SWITCHED, "direction": self.direction, "from": self.from_id,
                                 "to": self.to_id, "reason": self.reason}
        if self.session_id is not None:
            event["sessionId"] = self.session_id
        return event


# The mutable breaker state: one record per provider id, grouped in per-session partitions.

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


# Which failures move the fallback chain, and how fast.
#
# The one predicate both the unary and the streaming seam route through. Transport and
# model failures advance; grammar, tool and cancelled never do (the same request fails the
# same way everywhere, or it is our own bug, or the user stopped it).
#
# - "immediate": HTTP 408 / 429 / any 5xx, and a network failure that is not our own
#   request timeout, switch on the first occurrence. So do 401 / 402 / 403 / 404: a
#   rejected key, spent credit or a model the service no longer serves are facts about
#   that one provider, and the same request can still succeed on the next link.
# - "counted": our own request timeout (category provider_timeout: one slow turn is weak
#   evidence, and replaying a local timeout burns another full timeout of GPU time) and
#   model failures count toward `failureThreshold`.

AdvanceSignal = Literal["immediate", "counted"]
IMMEDIATE_STATUSES = frozenset({401, 402, 403, 404, 408, 429})
_TIMEOUT_CLASS_NAMES = frozenset({"ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException"})


def _chain(err: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def is_own_timeout(err: BaseException) -> bool:
    """Our client gave up waiting (read/write/pool timeout), as opposed to never connecting."""
    for e in _chain(err):
        if getattr(e, "timed_out", False) is True:
            return True
        if type(e).__name__ in _TIMEOUT_CLASS_NAMES or type(e) is TimeoutError:
            return True
    return False


def _status_of(err: BaseException) -> tuple[bool, int | None]:
    """(has a provider-level status answer, status) for provider errors and transport failures."""
    for e in _chain(err):
        if isinstance(e, (ProviderError, TransportError)):
            return True, e.status
    return False, None


def advance_signal(err: BaseException) -> AdvanceSignal | None:
    """How `err` moves the chain: "immediate", "counted", or None (never advances)."""
    if isinstance(err, TurnCancelledError) or is_cancellation(err):
        return None
    if isinstance(err, LlmFailure) and not isinstance(err, TransportError):
        return "counted" if err.category == "model" else None  # already classified by the loop
    is_provider, status = _status_of(err)
    if is_provider:
        if status is None:
            return "counted" if is_own_timeout(err) else "immediate"
        if status in IMMEDIATE_STATUSES or status >= 500:
            return "immediate"
        if 400 <= status < 500:
            return None  # the request itself was rejected: grammar category
        return "counted"
    category = classify_failure(err).category
    if category == "provider_timeout":
        return "counted"
    return "counted" if category in ("transport", "model") else None


def should_advance(err: BaseException) -> bool:
    return advance_signal(err) is not None


# The effective fallback chain: the active provider first, the declared links, local last.

def resolve_fallback_chain(fallback: FallbackConfig, configured: Sequence[str], active_id: str,
                           local_id: str | None) -> tuple[str, ...]:
    """Ordered provider ids, primary first.

    The active text provider is always hoisted to the head (a hot-swap re-primes the
    chain without editing it); ids that are no longer configured are dropped; with
    `appendLocal` the local llama-server entry is added last unless already present.
    """
    links = [active_id]
    for pid in fallback.chain or (active_id,):
        if pid in configured and pid not in links:
            links.append(pid)
    if fallback.append_local and local_id is not None and local_id not in links:
        links.append(local_id)
    return tuple(links)


# run_with_fallback: one completion through the chain.
#
# Each candidate is attempted in turn while the failures say "advance". An attempt whose
# stream has already emitted output is never restarted elsewhere: its failure is recorded
# and propagates as is. When the whole chain is exhausted the last error is re-raised
# unchanged, so the loop classifies it exactly as without a chain.

T = TypeVar("T")


@attrs.define
class LiveFlag:
    """Set by the attempt once output reached the caller; a live stream is not replayed."""

    live: bool = False


def describe_failure(err: BaseException) -> str:
    status = getattr(err, "status", None)
    text = str(err).strip()
    short = text if len(text) <= 160 else text[:157] + "..."
    if isinstance(err, ProviderError):
        what = f"HTTP {status}" if status is not None else "no HTTP answer"
        return f"{what}: {short}" if short else what
    return f"{type(err).__name__}: {short}" if short else type(err).__name__


async def run_with_fallback(chain: ProviderFallbackChain, attempt: Callable[[str, LiveFlag], Awaitable[T]],
                            session_id: str | None = None, *,
                            judge: Callable[[T], BaseException | None] | None = None,
                            on_notice: Callable[[SwitchNotice], None] | None = None) -> T:
    """Serve one completion. `judge(result)` names a failure inside a returned result (an
    unusable completion), which counts like a failure but is handed back when not switching."""
    pick = chain.pick(session_id)
    reason = ""
    last_error: BaseException | None = None
    last_result: tuple[T] | None = None
    for provider_id in chain.candidates(pick, session_id):
        flag = LiveFlag()
        try:
            result = await attempt(provider_id, flag)
        except Exception as err:
            signal = advance_signal(err)
            if signal is None:
                raise
            switch = chain.record_failure(session_id, provider_id, signal, pick)
            if flag.live or not switch:
                raise
            reason = reason or f"{provider_id}: {describe_failure(err)}"
            last_error, last_result = err, None
            continue
        failure = judge(result) if judge is not None else None
        if failure is not None:
            switch = chain.record_failure(session_id, provider_id, "counted", pick)
            if not switch or flag.live:
                return result
            reason = reason or f"{provider_id}: {describe_failure(failure)}"
            last_error, last_result = None, (result,)
            continue
        notice = chain.record_success(session_id, provider_id, pick, reason)
        if notice is not None and on_notice is not None:
            on_notice(notice)
        return result
    if last_result is not None:
        return last_result[0]
    assert last_error is not None
    raise last_error


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
