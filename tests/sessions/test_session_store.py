"""sessions.sqlite: round trip, append-only transcript, corrupt files refused with a clear message."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.sessions.session_store import SessionNotFoundError, SessionStore, SessionStoreError
from atomic_agent.sessions.transcript_entry import TOOL_CALL, USER, TranscriptEntry


def test_session_round_trip_with_transcript(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path / "work")
    store.append(state, [TranscriptEntry(USER, 0, text="héllo \u2603"),
                         TranscriptEntry(TOOL_CALL, 0, tool="t", args={"a": [1, 2]}, batch_index=0)])
    state.loaded_tools = ["x"]
    store.save_state(state)
    store.close()
    again = SessionStore(tmp_path).load(state.id)
    assert [e.text for e in again.entries] == ["héllo \u2603", ""]
    assert again.entries[1].args == {"a": [1, 2]} and [e.seq for e in again.entries] == [0, 1]
    assert again.loaded_tools == ["x"] and again.working_dir == tmp_path / "work"


def test_transcript_rows_are_append_only(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(USER, 0, text="original")])
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        store.db.execute("update transcript set text = 'rewritten'")
    assert store.load(state.id).entries[0].text == "original"


def test_corrupt_database_is_refused_with_a_clear_message_and_left_untouched(tmp_path: Path):
    path = tmp_path / "sessions.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    before = path.read_bytes()
    with pytest.raises(SessionStoreError, match="Move the file aside"):
        SessionStore(tmp_path)
    assert path.read_bytes() == before


def test_missing_session_names_how_to_find_ids(tmp_path: Path):
    with pytest.raises(SessionNotFoundError, match="sessions list"):
        SessionStore(tmp_path).load("nope")


def test_migrations_are_idempotent(tmp_path: Path):
    SessionStore(tmp_path).close()
    store = SessionStore(tmp_path)
    names = [r[0] for r in store.db.execute("select name from _migrations")]
    from atomic_agent.sessions.session_schema import MIGRATIONS

    assert names == [m.__name__ for m in MIGRATIONS]  # each applied once, in order


def test_delete_removes_session_and_transcript(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(USER, 0, text="x")])
    store.delete(state.id)
    assert not store.exists(state.id)
    assert store.db.execute("select count(*) from transcript").fetchone()[0] == 0
