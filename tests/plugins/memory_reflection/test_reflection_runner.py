"""The reflection runner: outcomes, slot, per-session abort, caps and shared validators."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import TurnDigest, TurnStart
from atomic_agent.llm.provider_protocol import Completion, ProviderError
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, reflection_runner, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider

REPLY = calls(("reply", {"text": "Noted."}))


def outcome_counts(runtime: Any) -> dict[str, float]:
    metrics = runtime.service("metrics")
    return {o: metrics.counter_value("agent.memory.reflection", outcome=o)
            for o in ("ok", "none", "failed", "aborted", "timeout")}


def stores(state: Path) -> tuple[ProfileStore, NoteStore, MemoryDatabase]:
    db = MemoryDatabase.open(memory_db_path(state))
    return ProfileStore(db), NoteStore(db), db


async def test_ok_writes_facts_and_notes_through_the_stores(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], "SET city=Lisbon\nNOTE moved to Lisbon in May [move]")
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("I moved to Lisbon in May", working_dir=tmp_path)
    await runtime.close()
    profile, notes, db = stores(tmp_path)
    assert profile.get("city").value == "Lisbon" and profile.get("city").source == "reflection"
    note = notes.all_notes()[0]
    assert note.tags == ("move", "reflection") and note.source == "reflection"
    db.close()
    assert outcome_counts(runtime)["ok"] == 1
    request = provider.reflection_requests[0]
    assert (request.slot_id, request.stream, request.cache_prompt) == (1, False, True)
    assert request.grammar is not None and request.grammar.startswith("root ::=")


async def test_none_outcome_for_none_and_for_only_invalid_lines(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY, REPLY], "NONE")
    runtime = make_memory_runtime(tmp_path, provider)
    session = (await runtime.run_turn("hello", working_dir=tmp_path)).session_id
    await settle(runtime)
    provider.reflect = "SET bad key=value\nblah"
    await runtime.run_turn("hello again", session_id=session)
    await runtime.close()
    assert outcome_counts(runtime)["none"] == 2
    assert runtime.service("metrics").counter_value("agent.memory.reflection.rejected") == 2


async def test_malformed_lines_do_not_stop_valid_ones(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], "garbage\nSET name=Alex\nSET name with spaces=x\nNOTE kept [ok]\n???")
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("I am Alex", working_dir=tmp_path)
    await runtime.close()
    profile, notes, db = stores(tmp_path)
    assert profile.get("name").value == "Alex" and [n.content for n in notes.all_notes()] == ["kept"]
    db.close()
    assert outcome_counts(runtime)["ok"] == 1


async def test_per_call_caps_bound_the_writes(tmp_path: Path) -> None:
    lines = "\n".join([f"SET k{i}=v{i}" for i in range(6)] + [f"NOTE n{i}" for i in range(6)])
    provider = RoutingProvider([REPLY], lines)
    runtime = make_memory_runtime(tmp_path, provider,
                                  config={"memoryReflection": {"maxFactsPerCall": 2, "maxNotesPerCall": 1}})
    await runtime.run_turn("lots: " + " ".join(f"k{i} is v{i}" for i in range(6)), working_dir=tmp_path)
    await runtime.close()
    profile, notes, db = stores(tmp_path)
    assert [f.key for f in profile.list()] == ["k0", "k1"] and notes.count() == 1
    db.close()


async def test_provider_error_counts_failed_and_never_reaches_the_turn(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], ProviderError("server exploded", status=500))
    runtime = make_memory_runtime(tmp_path, provider)
    result = await runtime.run_turn("hi", working_dir=tmp_path)
    await runtime.close()
    assert result.status == "done" and result.reply == "Noted."
    assert outcome_counts(runtime)["failed"] == 1
    assert "server exploded" in (reflection_runner(runtime).outcomes[-1].error or "")


async def test_a_slow_reflection_times_out(tmp_path: Path) -> None:
    async def slow(_request: Any) -> str:
        await asyncio.sleep(30)
        return "NONE"

    provider = RoutingProvider([REPLY], slow)
    runtime = make_memory_runtime(tmp_path, provider, config={"memoryReflection": {"timeoutMs": 100}})
    await runtime.run_turn("hi", working_dir=tmp_path)
    await runtime.close()
    assert outcome_counts(runtime)["timeout"] == 1


async def test_next_turn_of_the_same_session_aborts_the_reflection_in_flight(tmp_path: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def blocked(_request: Any) -> str:
        started.set()
        await release.wait()
        return "SET never=written"

    provider = RoutingProvider([REPLY, REPLY], blocked)
    runtime = make_memory_runtime(tmp_path, provider)
    runner = reflection_runner(runtime)
    session = (await runtime.run_turn("first", working_dir=tmp_path)).session_id
    await started.wait()
    assert runner.in_flight(session)
    provider.reflect = "NONE"
    await runtime.run_turn("second", session_id=session)
    await runtime.close()
    counts = outcome_counts(runtime)
    assert counts["aborted"] == 1 and counts["none"] == 1
    profile, _notes, db = stores(tmp_path)
    assert profile.get("never") is None
    db.close()


async def test_another_sessions_turn_never_aborts_a_reflection(tmp_path: Path) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def blocked(_request: Any) -> str:
        started.set()
        await release.wait()
        return "SET kept=yes"

    provider = RoutingProvider([REPLY, REPLY], blocked)
    runtime = make_memory_runtime(tmp_path, provider)
    first = (await runtime.run_turn("first: yes, keep it", working_dir=tmp_path)).session_id
    await started.wait()
    provider.reflect = "NONE"
    other = await runtime.run_turn("other session", working_dir=tmp_path)
    assert other.session_id != first and reflection_runner(runtime).in_flight(first)
    release.set()
    await runtime.close()
    assert outcome_counts(runtime)["aborted"] == 0
    profile, _notes, db = stores(tmp_path)
    assert profile.get("kept").value == "yes"
    db.close()


async def test_a_reflection_whose_session_moved_on_never_calls_the_model(tmp_path: Path) -> None:
    provider = RoutingProvider([], "SET stale=yes")
    runtime = make_memory_runtime(tmp_path, provider)
    runner = reflection_runner(runtime)
    runner.before_turn(TurnStart("s1", 4, "newer message", str(tmp_path)))
    outcome = await runner.after_turn(TurnDigest("s1", 3, "old message", "old reply"))
    assert outcome is not None and outcome.outcome == "aborted" and provider.reflection_requests == []
    await runtime.close()


async def test_without_grammar_transport_the_tolerant_parser_reads_prose(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], Completion(content="Here you go:\n- SET name: Alex\n- NOTE likes tea"),
                               transport="native_tools", reflection_slot_id=None)
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("I'm Alex and I like tea", working_dir=tmp_path)
    await runtime.close()
    request = provider.reflection_requests[0]
    assert request.grammar is None and request.slot_id == -1
    profile, notes, db = stores(tmp_path)
    assert profile.get("name").value == "Alex" and notes.count() == 1
    db.close()


async def test_reflection_never_uses_the_sessions_main_slot(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], "NONE", main_slot=1, reflection_slot_id=1)
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("hi", working_dir=tmp_path)
    await runtime.close()
    assert provider.requests[0].slot_id == 1 and provider.reflection_requests[0].slot_id == -1


async def test_channels_that_are_off_are_not_written(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], "SET name=Alex\nNOTE a note")
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes", "memory_reflection"],
                                  config={"memoryReflection": {"autoStoreNotes": False}})
    await runtime.run_turn("hi", working_dir=tmp_path)
    await runtime.close()
    assert outcome_counts(runtime)["none"] == 1  # no profile plugin, notes switched off for reflection
    profile, notes, db = stores(tmp_path)
    assert profile.list() == [] and notes.count() == 0
    db.close()


async def test_empty_reply_is_skipped(tmp_path: Path) -> None:
    provider = RoutingProvider([], "SET x=y")
    runtime = make_memory_runtime(tmp_path, provider)
    assert await reflection_runner(runtime).after_turn(TurnDigest("s", 0, "hi", "")) is None
    assert provider.reflection_requests == []
    await runtime.close()


async def test_copies_of_the_prompts_own_examples_are_not_stored(tmp_path: Path) -> None:
    provider = RoutingProvider([REPLY], "SET key=value\nSET full_name=Alex Kim\nSET city=Lisbon\n"
                                        "NOTE observation [tag1, tag2]")
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("I live in Lisbon", working_dir=tmp_path)
    await runtime.close()
    profile, notes, db = stores(tmp_path)
    assert [f.key for f in profile.list()] == ["city"] and notes.count() == 0
    db.close()
    reasons = [r.reason for r in reflection_runner(runtime).outcomes[-1].report.rejected]
    assert reasons.count("copies the prompt's example") == 3


async def test_a_fact_the_user_never_said_is_not_stored(tmp_path: Path) -> None:
    # a small model fills the profile from its prompt (examples, file names) instead of the user
    provider = RoutingProvider([REPLY], "SET full_name=Bob Stone\nSET key=file_name\nSET city=Porto\n")
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("list the files in this folder; I work from Porto", working_dir=tmp_path)
    await runtime.close()
    profile, _notes, db = stores(tmp_path)
    assert [(f.key, f.value) for f in profile.list()] == [("city", "Porto")]
    db.close()
    reasons = [r.reason for r in reflection_runner(runtime).outcomes[-1].report.rejected]
    assert reasons.count("the user did not say it") == 2


async def test_reflection_notes_carry_the_exchange_and_its_date_as_their_recall_key(
        tmp_path: Path, monkeypatch: Any) -> None:
    from atomic_agent.storage import store_clock

    monkeypatch.setattr(store_clock, "now_ms", lambda: 1_683_554_400_000)  # Monday 8 May 2023, 14:00 UTC
    provider = RoutingProvider([REPLY], "NOTE moved in May [move]")
    runtime = make_memory_runtime(tmp_path, provider)
    await runtime.run_turn("We finally got the apartment in Lisbon", working_dir=tmp_path)
    await runtime.close()
    _profile, notes, db = stores(tmp_path)
    (note,) = notes.all_notes()
    assert note.context == "We finally got the apartment in Lisbon\nNoted.\nwritten Monday 8 May 2023"
    assert [h.note.id for h in notes.recall("apartment lisbon", 5)] == [note.id]  # found by its context
    assert [h.note.id for h in notes.recall("what happened in may 2023", 5)] == [note.id]
    db.close()
