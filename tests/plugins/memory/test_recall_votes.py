"""Phase 7a beyond lessons: turn-outcome votes on recalled notes and shown profile facts.
The seed's invariants: the clamp is symmetric, a replayed session votes once, decay happens
once per tick (one statement per table) and never per vote, a downvoted note is evicted
before any neutral one, and a correction turns a turn's help votes into harm once."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore
from atomic_agent.plugins.memory.recall_votes import RecallVoteStore


@pytest.fixture
def db(tmp_path: Path):
    database = MemoryDatabase.open(memory_db_path(tmp_path))
    yield database
    database.close()


def test_the_clamp_is_symmetric_and_a_saturated_vote_records_nothing(db) -> None:
    note = NoteStore(db).store("the build uses uv").note
    votes = RecallVoteStore(db, max_vote=2)
    assert [votes.vote("note", note.id, "s", t, True) for t in range(3)] == ["applied", "applied", "clamp_hit"]
    assert votes.scores("note", [note.id]) == {note.id: 2.0} and (("note", note.id)) not in votes.turn_votes("s", 2)
    assert [votes.vote("note", note.id, "s", t, False) for t in range(3, 8)] == ["applied"] * 4 + ["clamp_hit"]
    assert votes.scores("note", [note.id]) == {note.id: -2.0}
    with pytest.raises(MemoryValidationError, match="above 0"):
        RecallVoteStore(db, max_vote=0)


def test_a_replayed_session_votes_once_and_a_missing_row_takes_no_vote(db) -> None:
    fact = ProfileStore(db).set("editor", "helix")
    votes = RecallVoteStore(db)
    assert votes.vote("profile", fact.id, "s", 0, True) == "applied"
    assert votes.vote("profile", fact.id, "s", 0, True) == "duplicate"
    assert votes.vote("profile", fact.id, "s", 0, False) == "duplicate"
    assert votes.vote("note", 999, "s", 0, True) == "missing"
    newer = ProfileStore(db).set("editor", "vim")  # the old version is closed: it takes no votes
    assert votes.vote("profile", fact.id, "s", 1, True) == "missing"
    assert ProfileStore(db).get("editor").vote_score == 0.0 and newer.id != fact.id
    with pytest.raises(MemoryValidationError, match="kind"):
        votes.vote("lesson", 1, "s", 0, True)


def test_decay_is_per_tick_not_per_vote(db) -> None:
    note = NoteStore(db).store("deploys go through the staging host").note
    fact = ProfileStore(db).set("timezone", "UTC")
    votes = RecallVoteStore(db)
    for turn in range(4):  # four turns inside one tick window: no decay between them
        votes.vote("note", note.id, "s", turn, True)
    votes.vote("profile", fact.id, "s", 0, False)
    assert votes.scores("note", [note.id]) == {note.id: 4.0}
    assert votes.decay(0.5).notes == 1
    assert votes.decay(0.5).profile == 1  # two ticks decay twice
    assert votes.scores("note", [note.id]) == {note.id: 1.0}
    assert votes.scores("profile", [fact.id]) == {fact.id: -0.25}
    for _ in range(6):
        votes.decay(0.5)
    assert votes.scores("profile", [fact.id]) == {fact.id: 0.0}  # decayed away: neutral again
    with pytest.raises(MemoryValidationError, match=r"\(0, 1\]"):
        votes.decay(0)


def test_a_downvoted_note_is_evicted_before_any_neutral_one(db) -> None:
    store = NoteStore(db, max_entries=3)
    ids = [store.store(f"note number {i} about the release", now=1000 + i).note.id for i in range(3)]
    votes = RecallVoteStore(db)
    votes.vote("note", ids[2], "s", 0, False)  # the newest, downvoted
    votes.vote("note", ids[0], "s", 0, True)  # the oldest, upvoted
    outcome = store.store("one more note", now=2000)
    assert outcome.evicted == (ids[2],)
    outcome = store.store("and another", now=2001)
    assert outcome.evicted == (ids[1],)  # then the oldest neutral; the upvoted one outlives it


def test_a_correction_turns_help_votes_into_harm_once(db) -> None:
    note = NoteStore(db).store("the api key lives in the vault").note
    fact = ProfileStore(db).set("shell", "fish")
    votes = RecallVoteStore(db)
    votes.vote("note", note.id, "s", 3, True)
    votes.vote("profile", fact.id, "s", 3, True)
    assert votes.overturn("s", 3, "note") == (("note", note.id),)
    assert votes.overturn("s", 3, "note") == ()  # an overturned vote is not overturned again
    assert votes.turn_votes("s", 3) == {("note", note.id): -1, ("profile", fact.id): 1}
    assert votes.scores("note", [note.id]) == {note.id: -1.0}
    assert votes.overturn("s", 3) == (("profile", fact.id),)
