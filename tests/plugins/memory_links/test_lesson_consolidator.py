"""Phase 5's locked invariants for the cold-path consolidator: one background-slot call per
cluster, abstain archives nothing, a failing cluster never stops its siblings, two ticks at once
collapse to one, a second tick with nothing new is a no-op, the cooldown is honoured, archived
notes leave the index and stay readable by id, and a leased member holds its whole cluster back."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.plugins.memory.lesson_store import LessonStore
from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory_links.lesson_consolidator import clusters_of
from atomic_agent.plugins.memory_links.lesson_parser import parse_lesson
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, phase

LESSON = 'LESSON when="a test run hangs on the network"; do="run it with --offline first"; tags=tests'


def seed(state: Path, groups: int = 2, size: int = 3, created_at: int = 1000) -> list[list[int]]:
    db = MemoryDatabase.open(memory_db_path(state))
    notes, links = NoteStore(db), LinkStore(db)
    out = []
    for g in range(groups):
        ids = [notes.store(f"group {g} note {i}: pytest hung waiting for the network", now=created_at).note.id
               for i in range(size)]
        for a, b in zip(ids, ids[1:], strict=False):
            links.add(a, b, "RELATES_TO", now=0)
        out.append(ids)
    db.close()
    return out


def consolidator(runtime: Any) -> Any:
    found = phase(runtime, "memory-consolidation")
    return found.consolidate.__self__


def runtime_with(tmp_path: Path, script: list[Any]) -> tuple[Any, ScriptedProvider]:
    provider = ScriptedProvider(script)
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes", "memory_links"])
    return runtime, provider


def test_clusters_are_connected_components_over_the_candidates() -> None:
    assert clusters_of([1, 2, 3, 4, 5, 9], [(1, 2), (2, 3), (4, 5), (5, 6), (7, 8)], 2) == [[1, 2, 3], [4, 5]]
    assert clusters_of([1, 2, 3], [(1, 2), (2, 3)], 4) == []


def test_the_parser_reads_a_lesson_or_the_abstain_sentinel() -> None:
    lesson = parse_lesson(LESSON)
    assert lesson is not None and lesson.advice == "run it with --offline first" and lesson.tags == ("tests",)
    assert parse_lesson("LESSON none") is None


async def test_one_call_per_cluster_on_the_background_slot_and_notes_archived(tmp_path: Path) -> None:
    groups = seed(tmp_path)
    runtime, provider = runtime_with(tmp_path, [LESSON, "LESSON none"])
    tick = await consolidator(runtime).run_once()
    assert (tick.outcome, tick.clusters, tick.abstained, len(tick.lessons)) == ("ok", 2, 1, 1)
    assert len(provider.requests) == 2  # one completion per cluster, nothing else
    memory = runtime.service("memory")
    assert {r.slot_id for r in provider.requests} == {memory.background_slot(provider, "memory-consolidator",
                                                                             "consolidator")}
    lesson = memory.lesson_store().get(tick.lessons[0])
    assert lesson.status == "candidate" and set(lesson.evidence) == set(groups[0]) and lesson.source == "consolidator"
    notes = memory.note_store()
    assert all(notes.consolidated_into(i) == lesson.id for i in groups[0])
    assert all(notes.consolidated_into(i) is None for i in groups[1])  # abstain is not archive
    assert all(notes.get(i) is not None for i in groups[0])  # archived notes stay readable by id
    index = {n.id for n in notes.recent(50)}
    assert not index & set(groups[0]) and set(groups[1]) <= index
    assert "> #" in provider.requests[0].prompt  # the notes are quoted as data in the distillation prompt
    # a second tick: the abstained cluster is tried again, the archived one never
    provider.script.append("LESSON none")
    again = await consolidator(runtime).run_once()
    assert (again.clusters, again.lessons) == (1, ())
    await runtime.close()


async def test_a_failing_cluster_never_stops_its_sibling(tmp_path: Path) -> None:
    seed(tmp_path)
    runtime, _provider = runtime_with(tmp_path, [RuntimeError("model fell over"), LESSON])
    tick = await consolidator(runtime).run_once()
    assert (tick.outcome, tick.failed, len(tick.lessons)) == ("ok", 1, 1) and "model fell over" in tick.errors[0]
    await runtime.close()


async def test_garbage_answers_fail_the_tick_without_writing(tmp_path: Path) -> None:
    seed(tmp_path, groups=1)
    runtime, _provider = runtime_with(tmp_path, ["sure! here is a lesson"])
    tick = await consolidator(runtime).run_once()
    assert (tick.outcome, tick.failed, tick.lessons) == ("failed", 1, ())
    assert runtime.service("memory").lesson_store().count() == 0
    await runtime.close()


async def test_two_ticks_at_once_collapse_to_one(tmp_path: Path) -> None:
    seed(tmp_path, groups=1)
    runtime, provider = runtime_with(tmp_path, [LESSON])
    provider.delay_s = 0.05  # the first tick is still distilling when the second starts
    first, second = await asyncio.gather(consolidator(runtime).run_once(), consolidator(runtime).run_once())
    assert sorted(t.clusters for t in (first, second)) == [0, 1] and len(provider.requests) == 1
    await runtime.close()


async def test_cooldown_and_leases_hold_clusters_back(tmp_path: Path) -> None:
    from atomic_agent.api import store_clock

    groups = seed(tmp_path, groups=2, created_at=store_clock.now_ms())
    runtime, provider = runtime_with(tmp_path, [LESSON])
    job = consolidator(runtime)
    job.cfg = type(job.cfg)(cooldown_ms=3_600_000)
    assert (await job.run_once()).clusters == 0 and provider.requests == []  # too young
    job.cfg = type(job.cfg)()
    memory = runtime.service("memory")
    assert memory.acquire_lease(groups[1][0])  # the evolver holds one member of the second cluster
    tick = await job.run_once()
    assert (tick.clusters, tick.skipped, len(tick.lessons)) == (2, 1, 1)
    assert LessonStore(memory.database).get(tick.lessons[0]).evidence == tuple(groups[0])
    await runtime.close()


async def test_every_tick_decays_lesson_votes_and_retires_the_downvoted_even_without_clusters(tmp_path: Path) -> None:
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    store = LessonStore(db)
    down, _ = store.create("a deploy fails", "deploy twice")
    kept, _ = store.create("a deploy is slow", "deploy at night")
    store.model_vote(down.id, "s", 0, up=False)
    store.model_vote(kept.id, "s", 0, up=True)
    db.close()
    runtime, provider = runtime_with(tmp_path, [])
    tick = await consolidator(runtime).run_once()
    assert tick.outcome == "none" and tick.clusters == 0 and provider.requests == []
    assert tick.curation.decayed == 2 and tick.curation.downvoted == (down.id,)
    lessons = runtime.service("memory").lesson_store()
    assert lessons.get(down.id).status == "deprecated" and lessons.get(kept.id).vote_score == 0.95
    await runtime.close()


async def test_every_tick_decays_note_and_profile_votes_by_the_lessons_factor(tmp_path: Path) -> None:
    from atomic_agent.plugins.memory.note_store import NoteStore
    from atomic_agent.plugins.memory.profile_store import ProfileStore
    from atomic_agent.plugins.memory.recall_votes import RecallVoteStore

    db = MemoryDatabase.open(memory_db_path(tmp_path))
    note = NoteStore(db).store("the nightly build runs at two").note
    fact = ProfileStore(db).set("editor", "helix")
    votes = RecallVoteStore(db)
    votes.vote("note", note.id, "s", 0, True)
    votes.vote("note", note.id, "s", 1, True)
    votes.vote("profile", fact.id, "s", 0, False)
    db.close()
    provider = ScriptedProvider([])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_notes", "memory_links"],
                                  config={"memoryLessons": {"signalDecay": 0.5}})
    tick = await consolidator(runtime).run_once()
    assert (tick.recall_decay.notes, tick.recall_decay.profile) == (1, 1)
    await consolidator(runtime).run_once()  # a second tick decays again
    scores = runtime.service("memory").recall_vote_store()
    assert scores.scores("note", [note.id]) == {note.id: 0.5} and scores.scores("profile", [fact.id]) == {fact.id: -0.25}
    await runtime.close()
