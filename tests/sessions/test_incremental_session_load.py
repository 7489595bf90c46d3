"""A store reads a session's transcript incrementally (transcript_cache): only rows after the
ones it holds, unless the database's rewrite count moved. The invariant: what a load returns
always equals a whole read of the file, whoever changed it (another store object standing in
for another process, a compaction, a repair that moves rows, a raw statement past every
protocol) and whatever was rolled back."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atomic_agent.sessions.compact_session import commit_compaction, take_snapshot
from atomic_agent.sessions.place_tool_results import place_tool_results
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import REPLY, TOOL_CALL, TOOL_RESULT, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.unanswered_calls import unanswered_calls


def _shape(entries: list[TranscriptEntry]) -> list[tuple[object, ...]]:
    return [(e.seq, e.kind, e.turn_index, e.text, e.tool, e.step, e.batch_index, e.status) for e in entries]


def _turn(store: SessionStore, sid: str, text: str) -> None:
    state = store.load(sid)
    index = state.next_turn_index
    store.append(state, [TranscriptEntry(TURN_STARTED, index), TranscriptEntry(USER, index, text=text),
                         TranscriptEntry(REPLY, index, text=f"re {text}")])


def test_rows_another_store_appended_are_seen_by_the_next_load(tmp_path: Path) -> None:
    mine, other = SessionStore(tmp_path), SessionStore(tmp_path)
    sid = mine.create(tmp_path).id
    _turn(mine, sid, "one")
    assert len(mine.load(sid).entries) == 3  # now held by `mine`
    _turn(other, sid, "two")
    assert _shape(mine.load(sid).entries) == _shape(mine.entries_read_whole(sid))
    assert [e.text for e in mine.load(sid).entries if e.kind == USER] == ["one", "two"]


def test_a_session_compacted_by_another_store_is_reloaded_whole(tmp_path: Path) -> None:
    mine, other = SessionStore(tmp_path), SessionStore(tmp_path)
    sid = mine.create(tmp_path).id
    for text in ("a", "b"):
        _turn(mine, sid, text)
    mine.load(sid)
    snapshot = take_snapshot(other, sid)
    assert snapshot is not None
    commit_compaction(other, snapshot, "summary of a and b")
    _turn(other, sid, "c")
    entries = mine.load(sid).entries
    assert [e.kind for e in entries][0] == "compaction"
    assert _shape(entries) == _shape(mine.entries_read_whole(sid))


def test_a_row_deleted_past_every_protocol_is_noticed(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    for text in ("a", "b", "c"):
        _turn(store, sid, text)
    store.load(sid)
    raw = sqlite3.connect(tmp_path / "sessions.sqlite")
    with raw:
        raw.execute("delete from transcript where session_id = ? and seq = 4", [sid])
    raw.close()
    assert 4 not in [e.seq for e in store.load(sid).entries]


def test_a_read_inside_a_rolled_back_transaction_is_never_kept(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    sid = store.create(tmp_path).id
    _turn(store, sid, "kept")
    store.load(sid)
    with pytest.raises(RuntimeError), store.write():
        state = store.load(sid)
        store.append(state, [TranscriptEntry(USER, 9, text="rolled back")])
        assert "rolled back" in [e.text for e in store.load(sid).entries]  # visible inside its transaction
        raise RuntimeError("abandon the transaction")
    assert "rolled back" not in [e.text for e in store.load(sid).entries]
    _turn(store, sid, "after")  # the same seq is written again: the held rows must not shadow it
    assert _shape(store.load(sid).entries) == _shape(store.entries_read_whole(sid))


OPS = st.lists(st.sampled_from(["turn_mine", "turn_other", "call_mine", "result_other", "repair_other",
                                "compact_other", "compact_mine", "raw_delete", "rolled_back", "load_mine"]),
               min_size=1, max_size=14)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS)
def test_the_incremental_view_equals_a_whole_reload_after_any_operations(ops: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        mine, other = SessionStore(where), SessionStore(where)
        try:
            sid = mine.create(where).id
            for op in ops:
                _apply(op, mine, other, sid, where)
                for store in (mine, other):
                    loaded = store.load(sid).entries
                    whole = store.entries_read_whole(sid)
                    assert _shape(loaded) == _shape(whole), op
                    assert _shape(store.entries(sid)) == _shape(whole)
                fresh = SessionStore(where)
                assert _shape(fresh.load(sid).entries) == _shape(mine.load(sid).entries)
                fresh.close()
        finally:
            mine.close()
            other.close()


def _apply(op: str, mine: SessionStore, other: SessionStore, sid: str, where: Path) -> None:
    if op in ("turn_mine", "turn_other"):
        _turn(mine if op == "turn_mine" else other, sid, op)
    elif op == "call_mine":  # a committed call, not yet answered (open at the tail)
        state = mine.load(sid)
        index = max(0, state.next_turn_index - 1)
        step = len([e for e in state.entries if e.kind == TOOL_CALL])
        mine.append(state, [TranscriptEntry(TOOL_CALL, index, tool="t.read", args={"p": step}, step=step,
                                            batch_index=0)])
    elif op == "result_other":
        state = other.load(sid)
        for call in unanswered_calls(state.entries)[-1:]:
            other.append(state, [TranscriptEntry(TOOL_RESULT, call.turn_index, text="ok", tool=call.tool,
                                                 status="ok", step=call.step, batch_index=call.batch_index)])
    elif op == "repair_other":  # a result placed beside its call, under later rows (moves rows)
        state = other.load(sid)
        calls = unanswered_calls(other.entries_read_whole(sid))
        if calls:
            call = calls[0]
            place_tool_results(other, state, [TranscriptEntry(TOOL_RESULT, call.turn_index, text="late",
                                                              tool=call.tool, status="error", step=call.step,
                                                              batch_index=call.batch_index)])
    elif op in ("compact_other", "compact_mine"):
        store = other if op == "compact_other" else mine
        snapshot = take_snapshot(store, sid)
        if snapshot is not None:
            commit_compaction(store, snapshot, "summary")
    elif op == "raw_delete":  # past every protocol: the newest row of the session
        raw = sqlite3.connect(where / "sessions.sqlite")
        with raw:
            raw.execute("delete from transcript where session_id = ? and seq = (select max(seq) from transcript "
                        "where session_id = ?)", [sid, sid])
        raw.close()
    elif op == "rolled_back":
        try:
            with mine.write():
                state = mine.load(sid)
                mine.append(state, [TranscriptEntry(USER, state.next_turn_index, text="never")])
                mine.load(sid)
                raise LookupError
        except LookupError:
            pass
    else:
        mine.load(sid)


def test_a_store_keeps_a_bounded_number_of_transcripts_and_reloads_an_evicted_one(tmp_path: Path) -> None:
    from atomic_agent.sessions.transcript_cache import CACHED_SESSIONS

    store = SessionStore(tmp_path)
    ids = [store.create(tmp_path).id for _ in range(CACHED_SESSIONS + 3)]
    for sid in ids:
        _turn(store, sid, f"hello {sid}")
    assert len(store._transcripts) == CACHED_SESSIONS  # what a many-session serve process holds
    first = store.load(ids[0]).entries  # evicted long ago: read whole again
    assert [e.text for e in first if e.kind == USER] == [f"hello {ids[0]}"]
    assert _shape(first) == _shape(store.entries_read_whole(ids[0]))
