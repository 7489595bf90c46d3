"""The breaker: switching, stickiness, cooldown ladder, probes, notices, partitions."""

from __future__ import annotations

import asyncio

from atomic_agent.providers.fallback_chain import ChainPick, ProviderFallbackChain
from atomic_agent.providers.llm_config import FallbackConfig

S = 1000.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += ms


def chain(**settings) -> tuple[ProviderFallbackChain, Clock]:
    clock = Clock()
    return ProviderFallbackChain(("primary", "backup", "local"), FallbackConfig(**settings), clock_ms=clock), clock


def switch_to_backup(c: ProviderFallbackChain, session: str | None = None):
    pick = c.pick(session)
    assert c.record_failure(session, "primary", "immediate", pick)
    return c.record_success(session, "backup", pick, "primary: HTTP 503")


def test_immediate_signal_switches_on_the_first_failure():
    c, clock = chain()
    pick = c.pick()
    assert c.candidates(pick) == ["primary", "backup", "local"]
    assert c.record_failure(None, "primary", "immediate", pick) is True
    assert c.breaker("primary").cooling(clock.now) and c.breaker("primary").failures == 0


def test_counted_failures_switch_only_at_the_threshold():
    c, _ = chain(failure_threshold=3)
    assert c.record_failure(None, "primary", "counted", c.pick()) is False
    assert c.record_failure(None, "primary", "counted", c.pick()) is False
    assert c.record_failure(None, "primary", "counted", c.pick()) is True
    assert c.breaker("primary").cooling(c._clock())


def test_a_success_resets_the_consecutive_failure_counter():
    c, _ = chain(failure_threshold=2)
    c.record_failure(None, "primary", "counted", c.pick())
    c.record_success(None, "primary", c.pick())
    assert c.record_failure(None, "primary", "counted", c.pick()) is False


def test_sticky_after_a_switch_the_dead_primary_is_not_picked():
    c, clock = chain()
    switch_to_backup(c)
    for _ in range(5):
        clock.advance(1 * S)
        pick = c.pick()
        assert pick == ChainPick("backup", override_id="backup")
        assert c.record_success(None, "backup", pick) is None  # no notice on sticky turns


def test_cooldown_escalates_30_60_300_and_caps_at_300s():
    c, clock = chain(probe_throttle_ms=0)
    switch_to_backup(c)
    applied = [c.breaker("primary").cooldown_until_ms - clock.now]
    for _ in range(4):
        clock.advance(c.breaker("primary").cooldown_until_ms - clock.now)  # cooldown elapsed -> probe
        pick = c.pick()
        assert pick.probe and pick.provider_id == "primary"
        assert c.record_failure(None, "primary", "immediate", pick) is True
        applied.append(c.breaker("primary").cooldown_until_ms - clock.now)
    assert applied == [30 * S, 60 * S, 300 * S, 300 * S, 300 * S]


def test_probe_waits_for_cooldown_and_throttle_then_success_switches_back():
    c, clock = chain()
    switch_to_backup(c)
    clock.advance(31 * S)  # cooldown over, first probe allowed at once
    pick = c.pick()
    assert pick.probe and c.candidates(pick) == ["primary", "backup", "local"]
    assert c.record_failure(None, "primary", "immediate", pick)  # still down: 60s cooldown, stay pinned
    assert c.override() == "backup"
    clock.advance(61 * S)  # cooldown over but the 5 min throttle is not
    assert c.pick() == ChainPick("backup", override_id="backup")
    clock.advance(240 * S)
    pick = c.pick()
    assert pick.probe
    notice = c.record_success(None, "primary", pick)
    assert notice is not None and notice.direction == "back" and (notice.from_id, notice.to_id) == ("backup", "primary")
    assert c.override() is None and c.breaker("primary").ladder_step == -1
    assert c.pick() == ChainPick("primary")


def test_exactly_one_notice_per_transition():
    c, clock = chain()
    away = switch_to_backup(c)
    assert away is not None and away.direction == "away" and (away.from_id, away.to_id) == ("primary", "backup")
    assert away.reason == "primary: HTTP 503"
    notices = [c.record_success(None, "backup", c.pick()) for _ in range(3)]
    assert notices == [None, None, None]
    pick = c.pick()
    c.record_failure(None, "backup", "immediate", pick)
    moved = c.record_success(None, "local", pick, "backup: HTTP 500")
    assert moved is not None and (moved.from_id, moved.to_id) == ("backup", "local")


def test_failure_window_resets_counter_and_ladder_lazily():
    c, clock = chain(failure_threshold=3)
    c.record_failure(None, "primary", "counted", c.pick())
    c.record_failure(None, "primary", "counted", c.pick())
    clock.advance(86_400 * S)
    c.pick()  # checked on the next access
    assert c.breaker("primary").failures == 0
    assert c.record_failure(None, "primary", "counted", c.pick()) is False


def test_partition_isolation_one_sessions_success_does_not_clear_anothers_cooldown():
    c, clock = chain()
    switch_to_backup(c, "s1")
    assert c.override("s1") == "backup" and c.override("s2") is None
    assert c.pick("s2") == ChainPick("primary")
    c.record_success("s2", "primary", c.pick("s2"))
    assert c.breaker("primary", "s1").cooling(clock.now) and c.override("s1") == "backup"
    assert c.breaker("primary", "s2").failures == 0 and not c.breaker("primary", "s2").cooling(clock.now)


def test_keyless_calls_share_one_default_partition():
    c, _ = chain()
    switch_to_backup(c)
    assert c.pick().provider_id == "backup" and c.pick(None).provider_id == "backup"
    assert c.pick("some-session").provider_id == "primary"


def test_reprime_drops_overrides_so_the_new_active_provider_leads():
    c, _ = chain()
    switch_to_backup(c, "s1")
    c.reprime(("backup", "primary", "local"))
    assert c.primary == "backup" and c.override("s1") is None and c.pick("s1") == ChainPick("backup")


async def test_no_timer_the_chain_never_schedules_anything():
    before = set(asyncio.all_tasks())
    c, clock = chain()
    switch_to_backup(c)
    clock.advance(400 * S)
    loop = asyncio.get_running_loop()
    handles = len(getattr(loop, "_scheduled", []))
    assert set(asyncio.all_tasks()) == before and len(getattr(loop, "_scheduled", [])) == handles
    assert c.pick().probe  # the probe is decided when a completion asks, from the clock alone
