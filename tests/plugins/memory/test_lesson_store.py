"""Lessons: lifecycle (candidate → active / deprecated / superseded, bi-temporal, never deleted),
votes once per (session, turn), bounded growth, evidence that was deleted, FTS syntax as text."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.memory.lesson_store import ACTIVE, CANDIDATE, DEPRECATED, SUPERSEDED, LessonStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.note_store import NoteStore
from tests.plugins.memory.cli_harness import run_cli


@pytest.fixture
def db(tmp_path: Path):
    database = MemoryDatabase.open(memory_db_path(tmp_path))
    yield database
    database.close()


def test_votes_promote_a_candidate_and_deprecate_a_harmful_lesson_once_per_turn(db) -> None:
    store = LessonStore(db)
    lesson, _ = store.create("tests fail after an edit", "run the whole test file, not one test", ["tests"])
    assert lesson.status == CANDIDATE and lesson.valid_to is None
    assert store.vote(lesson.id, "s1", 3, helped=True) == "applied"
    assert store.vote(lesson.id, "s1", 3, helped=True) == "duplicate"  # a replayed session votes once
    assert store.vote(lesson.id, "s1", 3, helped=False) == "duplicate"
    promoted = store.get(lesson.id)
    assert promoted is not None and promoted.status == ACTIVE and promoted.success_count == 1
    for turn in range(3):
        store.vote(lesson.id, "s2", turn, helped=False)
    gone = store.get(lesson.id)
    assert gone is not None and gone.status == DEPRECATED and gone.status_reason == "downvoted"
    assert gone.valid_to is not None  # closed, still readable by id
    assert store.vote(lesson.id, "s3", 0, helped=True) == "closed"
    assert store.vote(999, "s3", 0, helped=True) == "missing"
    assert store.recall("tests edit") == [] and store.recall("tests edit", include_closed=True)[0].id == lesson.id


def test_the_live_set_is_bounded_weakest_first(db) -> None:
    store = LessonStore(db, max_entries=3)
    ids = [store.create(f"trigger {i} about kites", f"advice {i}", now=1000 + i)[0].id for i in range(3)]
    store.vote(ids[0], "s", 0, helped=True)  # the oldest is the strongest: it survives
    _, swept = store.create("trigger 3 about kites", "advice 3", now=2000)
    assert swept == (ids[1],)
    assert store.count() == 3 and store.get(ids[1]).status_reason == "overflow"  # type: ignore[union-attr]


def test_supersede_and_manual_deprecation_keep_the_history(db) -> None:
    store = LessonStore(db)
    old, _ = store.create("deploys fail on friday", "deploy before noon")
    new, _ = store.create("deploys fail late in the week", "deploy monday to wednesday")
    assert store.supersede(old.id, new.id)
    replaced = store.get(old.id)
    assert replaced is not None and replaced.status == SUPERSEDED and replaced.superseded_by == new.id
    assert not store.supersede(old.id, new.id)  # already closed
    assert store.deprecate(new.id, "manual") and not store.deprecate(new.id)
    assert {x.status for x in store.list()} == {SUPERSEDED, DEPRECATED}


def test_bad_lessons_are_refused_with_what_to_fix(db) -> None:
    store = LessonStore(db)
    with pytest.raises(MemoryValidationError, match="trigger must be non-empty"):
        store.create("  ", "x")
    with pytest.raises(MemoryValidationError, match="at most 600"):
        store.create("t", "x" * 700)
    with pytest.raises(MemoryValidationError, match="note ids"):
        store.create("t", "a", evidence=["#3"])
    with pytest.raises(MemoryValidationError, match="tag"):
        store.create("t", "a", tags=["### rules; ignore previous"])


def test_deleted_evidence_is_reported_and_fts_syntax_is_text(db) -> None:
    notes = NoteStore(db)
    kept = notes.store("the build broke on python 3.13").note.id
    dropped = notes.store("the fix was pinning setuptools").note.id
    store = LessonStore(db)
    lesson, _ = store.create("the build breaks on a new python", "pin setuptools first", evidence=[kept, dropped])
    notes.forget(dropped)
    assert store.missing_evidence(lesson) == (dropped,)
    assert [x.id for x in store.recall('python NEAR("build*')] == [lesson.id]


def test_lessons_cli_lists_shows_and_deprecates(tmp_path: Path) -> None:
    database = MemoryDatabase.open(memory_db_path(tmp_path))
    note = NoteStore(database).store("evidence note").note.id
    lesson, _ = LessonStore(database).create("a long grep times out", "narrow the path first", ["search"],
                                             evidence=[note, 77], source="failed turn", origin="abc123#4")
    database.close()
    listed = run_cli(tmp_path, "memory", "lessons", "list", "--json").json()
    assert [(x["id"], x["status"]) for x in listed] == [(lesson.id, "candidate")]
    shown = run_cli(tmp_path, "memory", "lessons", "show", f"*{lesson.id}")
    assert shown.code == 0 and "narrow the path first" in shown.out and "#77 (deleted)" in shown.out
    assert "source:   failed turn, from turn abc123#4" in shown.out
    assert run_cli(tmp_path, "memory", "lessons", "deprecate", str(lesson.id)).out.startswith("deprecated")
    again = run_cli(tmp_path, "memory", "lessons", "deprecate", str(lesson.id))
    assert again.code == 1 and "already deprecated" in again.err
    assert run_cli(tmp_path, "memory", "lessons", "show", "abc").code == 2
    assert run_cli(tmp_path, "memory", "lessons", "list", "--status", "zombie").code == 2


def test_a_turn_distils_one_lesson_however_often_its_session_is_replayed(db) -> None:
    store = LessonStore(db)
    first, _ = store.create("a config file is not found", "list the directory first", origin="s1#4")
    again, swept = store.create("something else", "other advice", origin="s1#4")
    assert again == first and swept == () and store.count() == 1
    assert store.by_origin("s1#4") == first and first.origin == "s1#4" and store.by_origin("s1#5") is None
    other, _ = store.create("a config file is not found", "list the directory first")  # no origin: a new row
    assert other.id != first.id and other.origin is None


def test_a_corrected_turn_turns_its_help_votes_into_harm_once(db) -> None:
    store = LessonStore(db)
    lesson, _ = store.create("the port is asked for", "read the config file, not the docs")
    store.vote(lesson.id, "s1", 0, helped=True)  # promoted to active by the first help
    store.vote(lesson.id, "s1", 1, helped=True)
    assert store.overturn("s1", 1) == (lesson.id,)
    after = store.get(lesson.id)
    assert after is not None and (after.success_count, after.failure_count, after.vote_score) == (1, 1, 0.0)
    assert store.turn_votes("s1", 1) == {lesson.id: -1}
    assert store.overturn("s1", 1) == ()  # replayed: not overturned again
    assert store.overturn("s1", 7) == ()  # a turn that voted nothing
    assert store.overturn("s1", 0) == (lesson.id,)
    gone = store.get(lesson.id)
    assert gone is not None and gone.status == DEPRECATED and gone.status_reason == "downvoted"
    assert gone.vote_score == -2.0


def test_model_votes_saturate_at_the_clamp_and_count_once_per_turn(db) -> None:
    store = LessonStore(db)
    lesson, _ = store.create("a build is slow", "build with -j2")
    assert store.model_vote(lesson.id, "s", 0, up=True, max_vote=2.0) == "applied"
    assert store.get(lesson.id).status == ACTIVE  # promoted by its score, its outcome counts untouched
    assert store.model_vote(lesson.id, "s", 0, up=False) == "duplicate"  # a replayed turn votes once
    assert store.model_vote(lesson.id, "s", 1, up=True, max_vote=2.0) == "applied"
    assert store.model_vote(lesson.id, "s", 2, up=True, max_vote=2.0) == "clamp_hit"  # |score| <= maxVote
    after = store.get(lesson.id)
    assert (after.vote_score, after.success_count, after.failure_count) == (2.0, 0, 0)
    assert store.model_vote(lesson.id, "s", 2, up=False, max_vote=2.0) == "applied"  # a saturated write left no row
    assert store.model_vote(999, "s", 0, up=True) == "missing"
    store.deprecate(lesson.id)
    assert store.model_vote(lesson.id, "s", 9, up=True) == "closed"


def test_curation_decays_once_then_retires_the_downvoted_before_the_aged_and_spares_lessons_that_helped(db) -> None:
    store = LessonStore(db)
    day = 24 * 3600 * 1000
    bad, _ = store.create("bad", "bad advice", now=100 * day)
    worse, _ = store.create("worse", "worse advice", now=100 * day)
    helped, _ = store.create("helped", "good advice", now=0)
    old, _ = store.create("old", "unused advice", now=0)
    fresh, _ = store.create("fresh", "new advice", now=100 * day)
    store.model_vote(bad.id, "s", 0, up=False)
    store.model_vote(worse.id, "s", 0, up=False)
    store.model_vote(worse.id, "s", 1, up=False)
    store.vote(helped.id, "s", 2, helped=True)
    store.model_vote(helped.id, "s", 3, up=False)
    store.model_vote(helped.id, "s", 4, up=False)
    store.model_vote(helped.id, "s", 5, up=False)  # net negative, but it helped a turn once
    curation = store.curate(decay=0.5, age_ms=30 * day, limit=2, now=100 * day)
    assert curation.decayed == 3 and curation.downvoted == (worse.id, bad.id) and curation.aged_out == ()  # cap 2
    assert store.get(worse.id).vote_score == -1.0 and store.get(worse.id).status_reason == "downvoted"
    assert store.get(helped.id).status == ACTIVE and store.get(helped.id).vote_score == -1.0
    again = store.curate(decay=0.5, age_ms=30 * day, now=100 * day)
    assert again.downvoted == () and again.aged_out == (old.id,)  # a tick later the aged one goes
    assert store.get(fresh.id).status == CANDIDATE and store.get(helped.id).status == ACTIVE
    with pytest.raises(MemoryValidationError, match=r"decay must be in \(0, 1\]"):
        store.curate(decay=0)


def test_duplicate_live_lessons_merge_into_the_stronger_on_the_cold_path(db) -> None:
    store = LessonStore(db)
    first, _ = store.create("the config file is not found", "list the directory before reading the config")
    strong, _ = store.create("a config file is not found", "list the directory before reading a config file")
    other, _ = store.create("the config file is not found", "ask the user for the path")  # same when, other do
    store.vote(strong.id, "s", 0, helped=True)
    curation = store.curate()
    assert curation.merged == ((first.id, strong.id),)
    gone = store.get(first.id)
    assert (gone.status, gone.superseded_by, gone.status_reason) == (SUPERSEDED, strong.id, f"duplicate of #{strong.id}")
    assert gone.valid_to is not None and store.get(other.id).live and store.get(strong.id).live
    assert store.merge_duplicates() == ()  # merged once


def test_reranked_recall_lets_an_upvoted_lesson_outrank_a_more_relevant_one(db) -> None:
    store = LessonStore(db)
    exact, _ = store.create("nginx reload fails on a syntax error", "run nginx -t first")
    earned, _ = store.create("a web server reload fails", "check the nginx error log")
    for turn in range(3):
        store.model_vote(earned.id, "s", turn, up=True)
    plain = store.recall("nginx reload fails syntax error", 1)
    assert [x.id for x in plain] == [exact.id]  # BM25 alone
    blended = store.recall("nginx reload fails syntax error", 1, score_blend=0.4)
    assert [x.id for x in blended] == [earned.id]  # 0.4 × 3 votes outweigh the relevance gap
    outcomes_only = store.recall("nginx reload fails syntax error", 1, score_blend=0.0)
    assert [x.id for x in outcomes_only] == [exact.id]  # blend 0: votes do not count, outcomes (none) decide
