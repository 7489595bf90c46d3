"""v2.5 A locked invariants through a runtime: never the session's main slot (the background
slot; -1 only where none is reserved, counted), fire-safe (any failure
recalls with the raw message), empty history is a hard skip, and recall merges both
queries' hits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.llm.provider_protocol import ProviderError
from tests.plugins.memory_links.test_link_generator import recalled_ids
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY
from tests.plugins.memory_plugins.v2_scenario import SECOND, run_scenario

WITH_REWRITER = (*ALL_MEMORY, "memory_rewriter")
OUTCOME = "agent.memory.retrieve.rewriter"


def outcome(provider: Any, name: str) -> float:
    return provider.metrics.counter_value(OUTCOME, outcome=name)


async def test_rewriter_never_rides_the_main_slot_and_recall_merges_both_queries(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_REWRITER, {})
    assert [r.slot_id for r in provider.rewrite_requests] == [1]  # the background slot, never main (0)
    request = provider.rewrite_requests[0]
    assert request.grammar is not None and "rewritten_query" in request.grammar and request.n_predict <= 96
    assert "USER: how does the deploy pipeline work" in request.prompt and request.prompt.rstrip().endswith(
        f"{SECOND}\n### query")
    assert "#3" in recalled_ids(provider.requests[1].prompt)  # found only through the rewrite
    assert outcome(provider, "ok") == 1 and outcome(provider, "skipped_not_referential") == 1


async def test_without_the_rewriter_the_follow_up_recalls_nothing_from_the_rewrite(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, ALL_MEMORY, {})
    assert "### recalled" not in provider.requests[1].prompt or "#3" not in recalled_ids(provider.requests[1].prompt)


async def test_first_turn_referential_message_is_a_hard_skip_without_history(tmp_path: Path) -> None:
    from tests.plugins.memory_plugins import v2_scenario

    original = v2_scenario.FIRST
    v2_scenario.FIRST = "and what about it?"
    try:
        _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_REWRITER, {})
    finally:
        v2_scenario.FIRST = original
    assert outcome(provider, "skipped_no_history") == 1 and len(provider.rewrite_requests) == 1  # only turn 2


async def slow(_request: Any) -> str:
    await asyncio.sleep(30)
    return "<rewritten_query>never</rewritten_query>"


async def test_every_failure_falls_back_to_the_raw_message(tmp_path: Path) -> None:
    _s, _d, baseline = await run_scenario(tmp_path / "base", tmp_path, ALL_MEMORY, {})
    raw_recall = recalled_ids(baseline.requests[1].prompt) if "### recalled" in baseline.requests[1].prompt else []
    cases = {"timeout": slow, "failed": ProviderError("down", status=503),
             "none": "NONE"}
    for name, answer in cases.items():
        _seen, _db, provider = await run_scenario(tmp_path / name, tmp_path, WITH_REWRITER,
                                                  {"memoryRewriter": {"timeoutMs": 200}}, rewrite=answer)
        second = provider.requests[1].prompt
        assert (recalled_ids(second) if "### recalled" in second else []) == raw_recall, name
        assert outcome(provider, name) == 1, name
    for name, answer in {"empty": "<rewritten_query>   </rewritten_query>", "garbage": "\x00" * 5000}.items():
        _seen, _db, provider = await run_scenario(tmp_path / name, tmp_path, WITH_REWRITER, {}, rewrite=answer)
        assert outcome(provider, "failed") == 1, name


async def test_an_enormous_rewrite_is_clamped_before_recall(tmp_path: Path) -> None:
    huge = "<rewritten_query>" + " ".join(["staging cluster docker tag"] * 2000) + "</rewritten_query>"
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_REWRITER, {}, rewrite=huge)
    assert outcome(provider, "ok") == 1 and "#3" in recalled_ids(provider.requests[1].prompt)


async def test_without_a_reserved_slot_the_rewriter_falls_back_to_any_slot_and_counts_it(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_REWRITER, {},
                                              slots={"reflection_slot_id": -1})
    assert [r.slot_id for r in provider.rewrite_requests] == [-1]
    assert provider.metrics.counter_value("agent.memory.background_slot.fallback", caller="rewriter",
                                          reason="single_slot") == 1
