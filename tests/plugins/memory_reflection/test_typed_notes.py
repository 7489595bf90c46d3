"""v2.5 C locked invariants: typed markers become `type:X` tags (no schema change), legacy
untyped lines still parse, unknown types fail open, the typed prefix is byte-stable, the
grammar takes both shapes, and typed notes compose with the sliding window."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory_reflection.reflection_parser import parse_reflection
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime, settle
from tests.plugins.memory_plugins.routing_provider import RoutingProvider


def notes_of(text: str, typed: bool = True) -> list[tuple[str, tuple[str, ...]]]:
    parsed = parse_reflection(text, valid_key=lambda k: True, typed=typed)
    return [(n.content, n.tags) for n in parsed.notes]


def test_typed_marker_becomes_a_type_tag_in_front_of_the_others() -> None:
    assert notes_of("NOTE [type=event] moved to Lisbon in May [move, type:skill]") == [
        ("moved to Lisbon in May", ("type:event", "move"))]


def test_legacy_untyped_note_still_parses_without_a_type_tag() -> None:
    assert notes_of("NOTE uses make for deploys [ops]") == [("uses make for deploys", ("ops",))]


def test_unknown_type_is_dropped_and_the_observation_kept() -> None:
    assert notes_of("NOTE [type=rumour] the build is slow") == [("the build is slow", ())]
    assert notes_of("NOTE [type=event]no space keeps it all") == [("[type=event]no space keeps it all", ())]


def test_with_typed_notes_off_the_marker_is_plain_text() -> None:
    assert notes_of("NOTE [type=event] x", typed=False) == [("[type=event] x", ())]


async def run(state: Path, plugins: tuple[str, ...], config: dict, turns: int = 1,
              reflect: str = "NOTE [type=behavior] deploys every friday [ops]") -> RoutingProvider:
    provider = RoutingProvider([calls(("reply", {"text": "ok"}))] * turns, reflect)
    runtime = make_memory_runtime(state, provider, plugins, config=config)
    session = None
    for i in range(turns):
        session = (await runtime.run_turn(f"we deploy every friday, turn {i}", session_id=session,
                                          working_dir=state)).session_id
        await settle(runtime)
    await runtime.close()
    return provider


async def test_typed_prefix_and_grammar_are_used_and_byte_stable(tmp_path: Path) -> None:
    provider = await run(tmp_path, ALL_MEMORY, {"memoryTypedNotes": {"enabled": True}}, turns=2)
    first, second = provider.reflection_requests
    assert first.prompt[: first.prefix_length] == second.prompt[: second.prefix_length]
    assert "NOTE [type=T]" in first.prompt and first.grammar == second.grammar
    assert 'typemark ::= "[type=" notetype "] "' in (first.grammar or "")
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    tags = [n.tags for n in NoteStore(db).all_notes()]
    db.close()
    assert tags[0] == ("type:behavior", "ops", "reflection")


async def test_typed_notes_compose_with_the_sliding_window(tmp_path: Path) -> None:
    config = {"memoryTypedNotes": {"enabled": True}, "memorySegmentation": {"enabled": True, "triggerEveryTurns": 2}}
    provider = await run(tmp_path, ALL_MEMORY, config, turns=2)
    (request,) = provider.reflection_requests
    assert "NOTE [type=T]" in request.prompt[: request.prefix_length]
    assert "### turn 2\nUSER: we deploy every friday, turn 1" in request.prompt
