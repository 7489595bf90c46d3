"""run_with_fallback: which attempts run, what is re-raised, what a live stream may not do."""

from __future__ import annotations

import pytest

from atomic_agent.api import ProviderError
from atomic_agent.providers.fallback_chain import LiveFlag, ProviderFallbackChain, run_with_fallback
from atomic_agent.providers.llm_config import FallbackConfig
from atomic_agent.reliability.failure_taxonomy import GrammarError, ModelError, ToolExecutionError, TurnCancelledError


class Links:
    """Scripted outcomes per provider id: an exception, or a value (the last one repeats)."""

    def __init__(self, **script) -> None:
        self.script = {k: list(v) for k, v in script.items()}
        self.calls: list[str] = []
        self.live_before_failure: set[str] = set()

    async def attempt(self, pid: str, flag: LiveFlag):
        self.calls.append(pid)
        outcomes = self.script[pid]
        outcome = outcomes.pop(0) if len(outcomes) > 1 else outcomes[0]
        if pid in self.live_before_failure:
            flag.live = True
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def make_chain(**settings) -> ProviderFallbackChain:
    return ProviderFallbackChain(("a", "b", "c"), FallbackConfig(**settings), clock_ms=lambda: 5_000_000.0)


async def test_immediate_failure_is_served_by_the_next_link_in_the_same_call():
    links = Links(a=[ProviderError("busy", status=503)], b=["from b"], c=["from c"])
    notices = []
    assert await run_with_fallback(make_chain(), links.attempt, on_notice=notices.append) == "from b"
    assert links.calls == ["a", "b"] and len(notices) == 1 and notices[0].to_id == "b"


async def test_sticky_later_calls_go_straight_to_the_working_link():
    c = make_chain()
    links = Links(a=[ProviderError("busy", status=429)], b=["from b"], c=["x"])
    await run_with_fallback(c, links.attempt)
    links.calls.clear()
    for _ in range(3):
        assert await run_with_fallback(c, links.attempt) == "from b"
    assert links.calls == ["b", "b", "b"]


async def test_counted_failure_below_threshold_is_re_raised_without_switching():
    timeout = ProviderError("slow", status=None)
    timeout.timed_out = True  # type: ignore[attr-defined]
    links = Links(a=[timeout], b=["from b"], c=["x"])
    with pytest.raises(ProviderError):
        await run_with_fallback(make_chain(failure_threshold=2), links.attempt)
    assert links.calls == ["a"]


@pytest.mark.parametrize("err", [GrammarError("no parse"), ToolExecutionError("bug"), TurnCancelledError(),
                                 ProviderError("bad request", status=400)],
                         ids=["grammar", "tool", "cancelled", "http400"])
async def test_grammar_tool_and_cancelled_never_advance(err):
    c = make_chain()
    links = Links(a=[err], b=["from b"], c=["x"])
    with pytest.raises(type(err)):
        await run_with_fallback(c, links.attempt)
    assert links.calls == ["a"] and c.override() is None and c.breaker("a").failures == 0


async def test_whole_chain_exhaustion_re_raises_the_last_error_unchanged():
    last = ProviderError("local down too", status=None)
    links = Links(a=[ProviderError("a down", status=503)], b=[ProviderError("b down", status=502)], c=[last])
    with pytest.raises(ProviderError) as info:
        await run_with_fallback(make_chain(), links.attempt)
    assert info.value is last and links.calls == ["a", "b", "c"]


async def test_a_stream_that_already_emitted_is_never_restarted_elsewhere():
    c = make_chain()
    links = Links(a=[ProviderError("cut mid-stream", status=None)], b=["from b"], c=["x"])
    links.live_before_failure.add("a")
    with pytest.raises(ProviderError, match="cut mid-stream"):
        await run_with_fallback(c, links.attempt)
    assert links.calls == ["a"]
    assert c.breaker("a").cooling(5_000_000.0)  # but the failure still counts for the next turn


async def test_a_judged_model_failure_switches_only_at_the_threshold_and_is_handed_back_otherwise():
    def judge(result):
        return ModelError("empty", "empty") if result == "" else None

    c = make_chain(failure_threshold=2)
    links = Links(a=[""], b=["from b"], c=["x"])
    assert await run_with_fallback(c, links.attempt, judge=judge) == ""  # the loop raises its own ModelError
    assert await run_with_fallback(c, links.attempt, judge=judge) == "from b"
    assert links.calls == ["a", "a", "b"]


async def test_probe_failure_re_arms_and_the_call_is_still_served_by_the_pinned_link():
    now = [5_000_000.0]
    c = ProviderFallbackChain(("a", "b"), FallbackConfig(), clock_ms=lambda: now[0])
    links = Links(a=[ProviderError("down", status=503)], b=["from b"])
    await run_with_fallback(c, links.attempt)
    now[0] += 31_000
    links.calls.clear()
    assert await run_with_fallback(c, links.attempt) == "from b"
    assert links.calls == ["a", "b"] and c.override() == "b"
    assert c.breaker("a").cooldown_until_ms - now[0] == 60_000
