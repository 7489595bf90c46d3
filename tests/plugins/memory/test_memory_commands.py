"""`atomic-agent memory profile|notes|search|forget|export` over a real memory.sqlite."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.profile_store import ProfileStore
from tests.plugins.memory.cli_harness import run_cli


def seed(state: Path) -> None:
    db = MemoryDatabase.open(memory_db_path(state))
    profile, notes = ProfileStore(db), NoteStore(db)
    profile.set("language", "ru")
    profile.set("language", "en")
    profile.set("name", "Alex")
    notes.store("staging database listens on 5433", ["staging"])
    notes.store("the deploy script is ops/deploy.sh", ["ops"])
    db.close()


def test_profile_lists_active_facts_and_history_as_json(tmp_path: Path) -> None:
    seed(tmp_path)
    active = run_cli(tmp_path, "memory", "profile", "--json").json()
    assert [(r["key"], r["value"]) for r in active] == [("language", "en"), ("name", "Alex")]
    history = run_cli(tmp_path, "memory", "profile", "--history", "language", "--json").json()
    assert [(r["value"], r["active"]) for r in history] == [("ru", False), ("en", True)]
    assert len(run_cli(tmp_path, "memory", "profile", "--all", "--json").json()) == 3
    table = run_cli(tmp_path, "memory", "profile")
    assert table.code == 0 and "language" in table.out and "active" in table.out


def test_profile_shows_each_facts_vote_score(tmp_path: Path) -> None:
    from atomic_agent.plugins.memory.recall_votes import RecallVoteStore

    seed(tmp_path)
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    name = ProfileStore(db).get("name")
    for turn in range(2):
        RecallVoteStore(db).vote("profile", name.id, "s", turn, False)
    db.close()
    rows = {r["key"]: r["voteScore"] for r in run_cli(tmp_path, "memory", "profile", "--json").json()}
    assert rows == {"language": 0, "name": -2.0}
    table = run_cli(tmp_path, "memory", "profile")
    assert "votes" in table.out and "-2" in table.out


def test_notes_and_search(tmp_path: Path) -> None:
    seed(tmp_path)
    listed = run_cli(tmp_path, "memory", "notes", "--json").json()
    assert listed["total"] == 2 and listed["notes"][0]["content"].startswith("the deploy script")
    hits = run_cli(tmp_path, "memory", "search", 'staging "db" NEAR(', "--json").json()
    assert [h["id"] for h in hits] == [1] and "score" in hits[0]
    assert "#2" in run_cli(tmp_path, "memory", "search", "deploy").out


def test_forget_notes_and_profile_facts(tmp_path: Path) -> None:
    seed(tmp_path)
    done = run_cli(tmp_path, "memory", "forget", "#1", "--profile", "name", "--json")
    assert done.code == 0 and done.json() == {"notes": {"1": True}, "profile": {"name": True}, "missing": []}
    missing = run_cli(tmp_path, "memory", "forget", "42")
    assert missing.code == 1 and "no such note" in missing.out
    bad = run_cli(tmp_path, "memory", "forget", "abc")
    assert bad.code == 2 and "not a note id" in bad.err
    assert run_cli(tmp_path, "memory", "forget").code == 2


def test_export_writes_everything_including_history(tmp_path: Path) -> None:
    seed(tmp_path)
    out = tmp_path / "export.json"
    result = run_cli(tmp_path, "memory", "export", "--output", str(out))
    assert result.code == 0 and "3 profile rows and 2 notes" in result.out
    body = json.loads(out.read_text())
    assert len(body["profile"]) == 3 and len(body["notes"]) == 2
    assert run_cli(tmp_path, "memory", "export").json() == body


def test_commands_on_a_state_dir_without_memory_do_not_create_one(tmp_path: Path) -> None:
    assert run_cli(tmp_path, "memory", "profile", "--json").json() == []
    assert run_cli(tmp_path, "memory", "notes", "--json").json() == {"total": 0, "notes": []}
    assert not memory_db_path(tmp_path).exists()


def test_a_corrupt_database_is_reported_not_a_traceback(tmp_path: Path) -> None:
    memory_db_path(tmp_path).write_bytes(b"garbage" * 200)
    result = run_cli(tmp_path, "memory", "notes")
    assert result.code == 2 and "not a usable memory database" in result.err


def test_search_scores_read_as_a_share_of_the_best_match(tmp_path: Path) -> None:
    seed(tmp_path)
    db = MemoryDatabase.open(memory_db_path(tmp_path))
    notes = NoteStore(db)
    notes.store("staging has a database", ["misc"])
    for topic in ("kites", "bread", "tides", "chess", "ferns", "violins"):  # words rare enough to weigh
        notes.store(f"a note about {topic}")
    db.close()
    hits = run_cli(tmp_path, "memory", "search", "staging database listens", "--json").json()
    assert hits[0]["relevance"] == 1.0 and 0 < hits[-1]["relevance"] < 1.0
    assert [h["relevance"] for h in hits] == sorted((h["relevance"] for h in hits), reverse=True)
    table = run_cli(tmp_path, "memory", "search", "staging database listens").out
    assert "match" in table and "100%" in table
    assert "no note matches" in run_cli(tmp_path, "memory", "search", "zeppelin").out


def test_memory_add_stores_a_note_recall_finds(tmp_path: Path) -> None:
    added = run_cli(tmp_path, "memory", "add", "the backup runs at 02:00 from cron", "--tag", "ops", "-t", "Backup",
                    "--json")
    assert added.code == 0 and added.json()["tags"] == ["ops", "backup"] and added.json()["source"] == "cli"
    assert [h["id"] for h in run_cli(tmp_path, "memory", "search", "backup cron", "--json").json()] == \
        [added.json()["id"]]
    assert run_cli(tmp_path, "memory", "add", "plain note").out.startswith("stored #2")
    empty = run_cli(tmp_path, "memory", "add", "   ")
    assert empty.code != 0 and "content" in empty.err
    bad_tag = run_cli(tmp_path, "memory", "add", "x", "--tag", "t" * 40)
    assert bad_tag.code != 0 and "tag" in bad_tag.err
