"""Phase 7a through `run_turn`: the notes a turn was shown under ### recalled and the profile
facts under ### profile are voted on by the turn's outcome (reply: for, failure: against, a
correcting next message: the help votes turn into harm), and a fact voted down past the
threshold leaves ### profile even when it is pinned."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.plugins.memory.recall_votes import RecallVoteStore
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, settle

OFF = {"memoryReflection": {"enabled": False}}


def seed(state: Path) -> tuple[int, int]:
    db = MemoryDatabase.open(memory_db_path(state))
    note = NoteStore(db).store("the release checklist lives in docs/release.md").note
    fact = ProfileStore(db).set("editor", "helix", pinned=True)
    db.close()
    return note.id, fact.id


async def test_recalled_notes_and_shown_facts_are_voted_on_by_the_turn_outcome(tmp_path: Path) -> None:
    note, fact = seed(tmp_path)
    provider = ScriptedProvider([calls(("reply", {"text": "docs/release.md"})),
                                 calls(("reply", {"text": "sorry, it moved to RELEASING.md"}))])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_profile", "memory_notes"], config=OFF)
    first = await runtime.run_turn("where is the release checklist?", working_dir=tmp_path)
    await settle(runtime)
    prompt = provider.requests[0].prompt
    assert f"> #{note} (tool, " in prompt and f"(#{fact}, tool, since" in prompt
    votes = runtime.service("memory").recall_vote_store()
    assert votes.turn_votes(first.session_id, 0) == {("note", note): 1, ("profile", fact): 1}
    await runtime.run_turn("no, that's wrong, the checklist moved", session_id=first.session_id)
    await settle(runtime)
    # turn 1 corrected turn 0: both help votes became harm; turn 1's own reply voted for what it was shown
    assert votes.turn_votes(first.session_id, 0) == {("note", note): -1, ("profile", fact): -1}
    assert votes.turn_votes(first.session_id, 1) == {("note", note): 1, ("profile", fact): 1}
    assert votes.scores("note", [note]) == {note: 0.0} and votes.scores("profile", [fact]) == {fact: 0.0}
    await runtime.close()


async def test_a_fact_voted_down_past_the_threshold_leaves_the_profile_even_pinned(tmp_path: Path) -> None:
    _note, fact = seed(tmp_path)
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    kept = ProfileStore(db).set("shell", "fish", pinned=True)
    for turn in range(2):
        RecallVoteStore(db).vote("profile", fact, "old", turn, False)
    db.close()
    provider = ScriptedProvider([calls(("reply", {"text": "ok"})), calls(("reply", {"text": "ok"}))])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_profile"], config=OFF)
    await runtime.run_turn("hello", working_dir=tmp_path)
    await settle(runtime)
    prompt = provider.requests[0].prompt
    assert "- shell: fish" in prompt and "- editor: helix" not in prompt
    assert RecallVoteStore(runtime.service("memory").database).scores("profile", [kept.id]) == {kept.id: 1.0}
    await runtime.close()
    unfiltered = make_memory_runtime(tmp_path, provider, plugins=["memory_profile", "memory_notes"],
                                     config={**OFF, "memoryLessons": {"profileFilterThreshold": 0}})
    await unfiltered.run_turn("hello again", working_dir=tmp_path)
    assert "- editor: helix" in provider.requests[1].prompt  # threshold 0: the filter is off
    await unfiltered.close()


async def test_outcome_votes_switch_off(tmp_path: Path) -> None:
    note, fact = seed(tmp_path)
    provider = ScriptedProvider([calls(("reply", {"text": "docs/release.md"}))])
    runtime = make_memory_runtime(tmp_path, provider, plugins=["memory_profile", "memory_notes"],
                                  config={**OFF, "memoryLessons": {"outcomeVotes": False}})
    first = await runtime.run_turn("where is the release checklist?", working_dir=tmp_path)
    await settle(runtime)
    assert runtime.service("memory").recall_vote_store().turn_votes(first.session_id, 0) == {}
    await runtime.close()
