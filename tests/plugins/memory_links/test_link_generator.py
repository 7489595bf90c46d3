"""Phase 2 locked invariants through a runtime: the generator rides the reflection slot
(never the main slot), only allowlisted edges persist, expansion is folded in after the
base hits, autoGenerate=false keeps expansion without the call, and a single-slot server's
fallback to -1 is explicit and counted."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY
from tests.plugins.memory_plugins.unframed_prompt import unframed
from tests.plugins.memory_plugins.v2_scenario import run_scenario

WITH_LINKS = (*ALL_MEMORY, "memory_links")
# the link generator alone: the neighbour evolver (on by default, same plugin) rides no call here
LINKS_ONLY = {"memoryEvolution": {"enabled": False}}


def stored_links(state: Path) -> list[tuple[int, str, int, str]]:
    db = MemoryDatabase.open(memory_db_path(state))
    try:
        return sorted((k.from_id, k.kind, k.to_id, k.source) for k in LinkStore(db).all_links())
    finally:
        db.close()


def recalled_ids(prompt: str) -> list[str]:
    """The `#id` column of the prompt's `### recalled` section, in order."""
    prompt = unframed(prompt)
    lines = prompt[prompt.index("### recalled"):].splitlines()[1:]
    end = next((i for i, ln in enumerate(lines) if not ln.startswith("#") or ln.startswith("###")), len(lines))
    return [line.split(" ")[0] for line in lines[:end]]


async def test_link_generator_rides_the_reflection_slot_and_persists_only_allowlisted_edges(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY)
    assert len(provider.link_requests) == 1  # the follow-up recalled too little to link
    request = provider.link_requests[0]
    assert request.slot_id == 1 and request.slot_id != provider.slot_for("any")  # reflection slot, not main 0
    assert request.grammar is not None and "link-line" in request.grammar and "evolve-line" not in request.grammar
    assert "#4 Rotating the on-call pager" in request.prompt  # expanded notes are part of the allowlist
    assert stored_links(tmp_path / "s") == [(1, "RELATES_TO", 2, "link_generator"), (3, "RELATES_TO", 4, "link_generator")]


async def test_recall_expansion_is_folded_in_after_the_base_hits(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY)
    assert recalled_ids(provider.requests[0].prompt) == ["#1", "#2", "#3", "#4"]  # BM25 head first, then the graph


async def test_links_off_never_expands(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS,
                                              {**LINKS_ONLY, "memoryLinks": {"enabled": False}})
    assert recalled_ids(provider.requests[0].prompt) == ["#1", "#2", "#3"] and provider.link_requests == []


async def test_auto_generate_off_still_expands_but_makes_no_call(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS,
                                              {**LINKS_ONLY, "memoryLinks": {"autoGenerate": False}})
    assert recalled_ids(provider.requests[0].prompt) == ["#1", "#2", "#3", "#4"]
    assert provider.link_requests == [] and stored_links(tmp_path / "s") == [(3, "RELATES_TO", 4, "link_generator")]


async def test_too_few_surfaced_notes_skip_the_call(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS,
                                              {"memoryLinks": {"minCandidates": 5}})
    assert provider.link_requests == []


async def test_garbage_from_the_generator_persists_nothing(tmp_path: Path) -> None:
    garbage = "LINK #1 RELATES_TO #1\nLINK #1 RELATES_TO #9999\n" + "\x00<<>>" * 2000 + "\nLINK #2 KNOWS #3"
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY, links=garbage)
    assert len(provider.link_requests) == 1
    assert stored_links(tmp_path / "s") == [(3, "RELATES_TO", 4, "link_generator")]  # only the seed


async def test_generator_failure_never_reaches_the_turn(tmp_path: Path) -> None:
    from atomic_agent.llm.provider_protocol import ProviderError

    seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY,
                                             links=ProviderError("boom", status=500))
    assert len(provider.link_requests) == 1 and len(provider.requests) == 2  # both turns answered


async def test_single_slot_server_falls_back_to_any_slot_explicitly_and_counts_it(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY,
                                              slots={"reflection_slot_id": -1})
    assert [r.slot_id for r in provider.link_requests] == [-1]
    assert all(r.slot_id == -1 for r in provider.reflection_requests)
    fallback = "agent.memory.background_slot.fallback"
    assert provider.metrics.counter_value(fallback, caller="link_generator", reason="single_slot") == 1
    assert provider.metrics.counter_value(fallback, caller="reflection", reason="single_slot") == 2


async def test_a_reserved_slot_is_counted_as_such(tmp_path: Path) -> None:
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, WITH_LINKS, LINKS_ONLY)
    assert provider.metrics.counter_value("agent.memory.background_slot.reserved", caller="link_generator") == 1
    assert provider.metrics.counter_total("agent.memory.background_slot.fallback") == 0
