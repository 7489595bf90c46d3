"""Load repairs a call stranded under later rows, atomically and beside its call; an open
batch at the tail is left for its running turn or for recovery."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import (
    TOOL_CALL,
    TOOL_RESULT,
    TURN_FINISHED,
    TURN_STARTED,
    USER,
    TranscriptEntry,
)
from atomic_agent.sessions.unanswered_calls import unanswered_calls


def _stranded(store: SessionStore, tmp_path: Path) -> str:
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="first"),
                         TranscriptEntry(TOOL_CALL, 0, tool="t.store", args={"path": "x"}, step=0, batch_index=0),
                         TranscriptEntry(TOOL_CALL, 0, tool="t.read", args={"path": "y"}, step=0, batch_index=1),
                         TranscriptEntry(TOOL_RESULT, 0, text="stored", tool="t.store", status="ok", step=0,
                                         batch_index=0),
                         TranscriptEntry(TURN_STARTED, 1), TranscriptEntry(USER, 1, text="second")])
    return state.id


def test_load_repairs_a_stranded_call_under_a_later_message(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = _stranded(store, tmp_path)
    entries = store.load(sid).entries
    assert [(e.kind, e.tool or e.text) for e in entries] == [
        ("turn_started", ""), ("user", "first"), ("assistant_tool_call", "t.store"), ("assistant_tool_call", "t.read"),
        ("tool_result", "t.store"), ("tool_result", "t.read"), ("turn_started", ""), ("user", "second")]
    repaired = entries[5]
    assert repaired.status == "error" and repaired.batch_index == 1 and "never returned a result" in repaired.text
    assert [e.seq for e in entries] == list(range(8))
    assert unanswered_calls(entries) == []
    assert store.load(sid).entries == entries  # a second load finds nothing to do
    store.close()


def test_load_leaves_an_open_batch_at_the_tail_alone(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="go"),
                         TranscriptEntry(TOOL_CALL, 0, tool="t.read", args={"path": "a"}, step=0, batch_index=0)])
    assert [e.kind for e in store.load(state.id).entries][-1] == "assistant_tool_call"
    assert len(unanswered_calls(store.load(state.id).entries)) == 1
    store.close()


def test_repair_is_one_transaction(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = _stranded(store, tmp_path)
    before = store.conn.execute("select * from transcript order by seq").fetchall()
    # fail the re-insert half-way: the delete before it must roll back with it
    store.conn.execute("CREATE TEMP TRIGGER fail_second_user BEFORE INSERT ON transcript "
                     "WHEN NEW.kind = 'user' AND NEW.text = 'second' BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    store.load(sid)  # the repair fails; the load still answers
    assert store.conn.execute("select * from transcript order by seq").fetchall() == before
    store.conn.execute("DROP TRIGGER fail_second_user")
    assert unanswered_calls(store.load(sid).entries) == []
    store.close()


def _finished_with_an_open_call(store: SessionStore, tmp_path: Path, status: str) -> str:
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="go"),
                         TranscriptEntry(TOOL_CALL, 0, tool="t.store", args={"path": "x"}, step=0, batch_index=0),
                         TranscriptEntry(TURN_FINISHED, 0, status=status, reason=status)])
    return state.id


def test_load_repairs_a_call_its_finished_turn_never_answered(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = _finished_with_an_open_call(store, tmp_path, "failed")  # even the failure handling could not write
    kinds = [e.kind for e in store.load(sid).entries]
    assert kinds == ["turn_started", "user", "assistant_tool_call", "tool_result", "turn_finished"]
    store.close()


def test_load_leaves_an_interrupted_turns_calls_for_recovery(tmp_path: Path):
    store = SessionStore(tmp_path)
    sid = _finished_with_an_open_call(store, tmp_path, "interrupted")  # recovery may still re-run durable ones
    assert len(unanswered_calls(store.load(sid).entries)) == 1
    store.close()
