"""The memory fabric's invariants 1-6, each pinned by a test named for it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.testing.scripted_provider import calls
from atomic_agent.testing.tool_context_kit import make_tool_context
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, reflection_runner, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider
from tests.plugins.memory_plugins.unframed_prompt import unframed

REPLY = calls(("reply", {"text": "Done."}))


def prefix_hashes(state: Path, session_id: str) -> set[str]:
    trace = state / "traces" / f"{session_id}.ndjson"
    events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    return {e["stablePrefixHash"] for e in events if e.get("type") == "prompt_captured" or "stablePrefixHash" in e}


async def test_invariant_1_stable_prefix_untouched_by_memory_writes(tmp_path: Path) -> None:
    script = [calls(("memory.profile.set", {"key": "name", "value": "Alex"})), REPLY,
              calls(("memory.notes.store", {"content": "zebra crossing near the office"})), REPLY, REPLY]
    provider = RoutingProvider(script, "SET city=Lisbon\nNOTE reflected zebra fact")
    runtime = make_memory_runtime(tmp_path / "s", provider)
    session = (await runtime.run_turn("I am Alex from Lisbon", working_dir=tmp_path)).session_id
    for text in ("remember the zebra crossing", "what about the zebra?"):
        await settle(runtime)
        await runtime.run_turn(text, session_id=session)
    plan = await runtime.prompt_plan()
    framed = plan.profile.frame_stable_prefix(plan.stable_prefix_for(tmp_path))
    await runtime.close()
    prompts = [r.prompt for r in provider.requests]
    assert len(prompts) == 5 and all(p.startswith(framed) for p in prompts)
    for word in ("Alex", "Lisbon", "zebra", "### profile", "### recalled"):
        assert word not in framed
    assert "- city: Lisbon" in unframed(prompts[-1]) and "### recalled" in prompts[-1]  # memory did land, in the tail
    assert len(prefix_hashes(tmp_path / "s", session)) == 1


async def test_invariant_2_reflection_never_blocks_or_crashes_the_loop(tmp_path: Path) -> None:
    gate, started = asyncio.Event(), asyncio.Event()

    async def stuck(_request: Any) -> str:
        started.set()
        await gate.wait()
        raise RuntimeError("reflection crashed")

    provider = RoutingProvider([REPLY], stuck)
    runtime = make_memory_runtime(tmp_path / "s", provider)
    result = await runtime.run_turn("hello", working_dir=tmp_path)
    assert result.status == "done" and result.reply == "Done."  # returned before the reflection even ran
    await started.wait()
    assert reflection_runner(runtime).in_flight(result.session_id)
    gate.set()
    await runtime.close()
    metrics = runtime.service("metrics")
    assert metrics.counter_value("agent.memory.reflection", outcome="failed") == 1
    assert "reflection crashed" in (reflection_runner(runtime).outcomes[-1].error or "")


async def test_invariant_3_notes_corpus_never_dumped_wholesale(tmp_path: Path) -> None:
    state = tmp_path / "s"
    db = MemoryDatabase.open(memory_db_path(state))
    NoteStore(db, max_entries=10_000).store_many(
        [NoteInput(f"kubernetes note {i}: " + "detail " * 80) for i in range(500)])
    db.close()
    provider = RoutingProvider([REPLY], "NONE")
    runtime = make_memory_runtime(state, provider, config={"memoryNotes": {"maxEntries": 10_000}})
    await runtime.run_turn("kubernetes?", working_dir=tmp_path)
    await runtime.close()
    prompt = unframed(provider.requests[0].prompt)
    note_lines = [line for line in prompt.splitlines() if line.startswith("#") and "kubernetes note" in line]
    assert 0 < len(note_lines) <= 3 + 20  # recalled k + index limit
    assert all(len(line) < 220 for line in note_lines)  # previews only; full bodies need recall {id}
    assert prompt.count("detail") < 500


async def test_invariant_4_bounded_growth_under_a_reflection_flood(tmp_path: Path) -> None:
    flood = "\n".join([f"SET fact_{i}=value {i}" for i in range(8)])

    def answer(_request: Any) -> str:
        return flood if len(provider.reflection_requests) % 2 else "\n".join(f"NOTE flood note {i}" for i in range(8))

    provider = RoutingProvider([REPLY] * 30, answer)
    runtime = make_memory_runtime(tmp_path / "s", provider, config={
        "memoryNotes": {"maxEntries": 5, "index": {"maxTokens": 40}, "recallInjection": {"maxTokens": 40}},
        "memoryProfile": {"maxTokens": 40}})
    session = (await runtime.run_turn("flood 0: value 0 1 2 3 4 5 6 7", working_dir=tmp_path)).session_id
    for i in range(1, 30):
        await settle(runtime)  # let each reflection finish: maximal writes
        await runtime.run_turn(f"flood {i} fact note: value 0 1 2 3 4 5 6 7", session_id=session)
    sections = runtime.memory_sections(session, "fact note flood")
    await runtime.close()
    db = MemoryDatabase.open(memory_db_path(tmp_path / "s"))
    assert NoteStore(db).count() <= 5
    assert ProfileStore(db).count() <= 3  # maxFactsPerCall; repeats do not grow history
    assert ProfileStore(db).count(active_only=False) == 3
    db.close()
    from atomic_agent.prompt.build_prompt import estimate_tokens

    assert sections and all(sum(estimate_tokens(l) + 1 for l in s.body.splitlines()) <= 40 for s in sections)


async def test_invariant_5_single_validator_path_per_writer(tmp_path: Path, monkeypatch: Any) -> None:
    from atomic_agent.plugins.memory import note_store, profile_store

    seen: list[str] = []
    real_fact, real_note = profile_store.validate_fact, note_store.validate_note
    monkeypatch.setattr(profile_store, "validate_fact", lambda *a, **k: (seen.append("fact"), real_fact(*a, **k))[1])
    monkeypatch.setattr(note_store, "validate_note", lambda *a, **k: (seen.append("note"), real_note(*a, **k))[1])
    provider = RoutingProvider([REPLY], "SET _bad=x\nSET city=Lisbon\nNOTE from reflection")
    runtime = make_memory_runtime(tmp_path / "s", provider)
    ctx = make_tool_context(tmp_path)
    tool_bad = await runtime.registry.get("memory.profile.set").run({"key": "_bad", "value": "x"}, ctx)
    await runtime.registry.get("memory.notes.store").run({"content": "from the tool"}, ctx)
    await runtime.run_turn("hi from Lisbon, x", working_dir=tmp_path)
    await runtime.close()
    assert seen.count("fact") == 3 and seen.count("note") == 2  # tool + reflection, every write validated
    refused = [r for r in reflection_runner(runtime).outcomes[-1].report.rejected if "_bad" in r.line]
    assert refused and refused[0].reason == tool_bad.summary  # the same validator, the same message


async def test_invariant_6_ephemeral_recall_fields_not_persisted(tmp_path: Path) -> None:
    state = tmp_path / "s"
    db = MemoryDatabase.open(memory_db_path(state))
    NoteStore(db).store("the marmalade recipe uses bitter seville oranges", ["kitchen"])
    db.close()
    provider = RoutingProvider([REPLY], "NONE")
    runtime = make_memory_runtime(state, provider)
    result = await runtime.run_turn("marmalade?", working_dir=tmp_path)
    loaded = runtime.sessions.load(result.session_id)
    await runtime.close()
    assert "### recalled\n#1 [kitchen] the marmalade recipe" in unframed(provider.requests[0].prompt)
    raw = b"".join(p.read_bytes() for p in state.glob("sessions.sqlite*"))
    assert b"seville" not in raw and b"kitchen" not in raw
    assert not {"recalled_notes", "memory_index", "recalled"} & {a.name for a in SessionState.__attrs_attrs__}
    assert loaded.known_facts == []
