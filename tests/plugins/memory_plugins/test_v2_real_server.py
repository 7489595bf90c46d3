"""Memory v2 sub-calls against the real llama-server fixture (SmolLM2-135M, 2 slots): the
link generator (with the evolver riding it) runs on the reserved reflection slot with its
GBNF grammar accepted and leaves the session's main slot exactly as the turn left it; the
query rewriter's grammar is accepted and it, too, stays off the main slot (on -1 the
server handed it the main slot and evicted the session's cached prefix: measured here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import ExchangePair, slot_affinity
from atomic_agent.hook_records import TurnDigest
from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime, phase, settle
from tests.plugins.memory_plugins.test_memory_real_server import slot_state

pytestmark = pytest.mark.llama_server

PLUGINS = [*ALL_MEMORY, "memory_links", "memory_rewriter", "llama_server"]
CONFIG = {"agent": {"maxSteps": 2}, "memoryReflection": {"timeoutMs": 120_000},
          "memoryLinks": {"generatorTimeoutMs": 120_000}, "memoryRewriter": {"timeoutMs": 60_000}}
NOTES = ("The staging database listens on port 5433", "The staging database is backed up nightly at 02:00",
         "Production database backups go to the cold bucket")


async def test_link_generator_rides_the_reflection_slot_on_the_real_server(tmp_path: Path, llama_server: Any) -> None:
    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    state.mkdir()
    db = MemoryDatabase.open(memory_db_path(state))
    NoteStore(db).store_many([NoteInput(n) for n in NOTES])
    db.close()
    runtime = make_memory_runtime(state, None, PLUGINS, config=CONFIG,
                                  environ={"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url})
    text = "Which port does the staging database use, and when is it backed up?"
    result = await runtime.run_turn(text, working_dir=work)
    provider = slot_affinity(runtime.provider)
    assert provider is not None  # the llama-server provider has slots
    main, reserved = provider.slot_for(result.session_id), provider.reflection_slot()
    assert (main, reserved) == (0, llama_server.total_slots - 1)
    main_before = slot_state(llama_server.base_url, main)
    generator = phase(runtime, "memory-links").after_turn.__self__
    await settle(runtime)
    if not generator.outcomes:  # the turn ended without a digest the phases saw: run it on a canned reply
        await generator.after_turn(TurnDigest(result.session_id, result.turn_index, text, "Port 5433, nightly."))
    outcome = generator.outcomes[-1]
    assert outcome.outcome in ("ok", "none"), outcome.error  # composed GBNF accepted, answer parsed
    assert outcome.slot_id == reserved
    assert slot_state(llama_server.base_url, main) == main_before
    db = MemoryDatabase.open(memory_db_path(state))
    surfaced = set(runtime.service("memory_links").surfaced(result.session_id, text))
    assert all(k.from_id in surfaced and k.to_id in surfaced and k.from_id != k.to_id
               for k in LinkStore(db).all_links())  # whatever the small model proposed, only allowlisted edges
    db.close()
    rewriter = runtime.service("memory_query_rewriter")
    rewritten = await rewriter.rewrite(result.session_id, "and when is it backed up?",
                                       (ExchangePair(text, "It listens on port 5433."),))
    assert rewritten.outcome in ("ok", "none"), rewritten.detail  # the rewriter grammar was accepted
    assert slot_state(llama_server.base_url, main) == main_before
    await runtime.close()


async def test_lessons_turn_and_consolidation_on_the_real_server(tmp_path: Path, llama_server: Any) -> None:
    """One turn with a lesson shown (### lessons quoted, the turn votes on it, and the model's
    vote grammar is accepted on the reserved slot), a lesson distilled from that turn once the
    user corrects it (the turn-lesson grammar accepted), then one consolidation tick whose
    distillation grammar the real server accepts on the reserved slot."""
    from atomic_agent.plugins.memory.lesson_store import LessonStore

    state, work = tmp_path / "state", tmp_path / "work"
    work.mkdir()
    state.mkdir()
    db = MemoryDatabase.open(memory_db_path(state))
    ids, _ = NoteStore(db).store_many([NoteInput(n) for n in NOTES])
    links = LinkStore(db)
    links.add(ids[0], ids[1], "RELATES_TO", now=0)
    links.add(ids[1], ids[2], "RELATES_TO", now=0)
    lesson, _ = LessonStore(db).create("a question about the staging database", "check the port note first",
                                       ["staging"])
    db.close()
    runtime = make_memory_runtime(state, None, [*PLUGINS], config={**CONFIG, "memoryConsolidation": {
        "distillTimeoutMs": 120_000}}, environ={"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url})
    result = await runtime.run_turn("Which port does the staging database use?", working_dir=work)
    await settle(runtime)
    memory = runtime.service("memory")
    voted = memory.lesson_store().get(lesson.id)
    if result.reason in ("reply", "finish"):
        assert voted.success_count == 1
    else:
        assert voted.success_count == 0
    runner = phase(runtime, "memory-reflection").after_turn.__self__
    votes = next(o.votes for o in reversed(runner.outcomes) if o.votes is not None)
    assert votes.outcome in ("ok", "none"), votes.error  # the vote grammar accepted, the answer parsed
    trouble = memory.assess_turn(runtime.sessions.entries(result.session_id), result.session_id, result.turn_index,
                                 correction="No, that's wrong: look at the port note")
    taught = await runner.lessons.distil(trouble)
    assert taught.outcome in ("ok", "none"), taught.error  # the turn-lesson grammar accepted, the answer parsed
    tick = await phase(runtime, "memory-consolidation").consolidate.__self__.run_once()
    assert tick.clusters == 1 and tick.failed == 0, tick.errors  # grammar accepted, answer parsed
    await runtime.close()
