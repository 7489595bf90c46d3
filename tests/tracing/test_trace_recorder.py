"""TraceRecorder: append-only NDJSON, monotonic seq across reopen, byte cap, one file per session."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from atomic_agent.tracing import trace_events as ev
from atomic_agent.tracing.trace_events import tool_invocation_fields
from atomic_agent.tracing.trace_paths import InvalidSessionIdError, trace_path
from atomic_agent.tracing.trace_recorder import TraceRecorder


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_trace_is_append_only(tmp_path: Path):
    recorder = TraceRecorder.for_session(tmp_path, "s1")
    recorder.record(ev.SESSION_STARTED, workingDir="/w")
    recorder.record(ev.TURN_STARTED, turnIndex=0, userText="hi")
    before = recorder.path.read_bytes()
    recorder.record(ev.STEP_STARTED, turnIndex=0, step=1)
    recorder.close()
    after_first_process = recorder.path.read_bytes()
    assert after_first_process.startswith(before)

    with TraceRecorder.for_session(tmp_path, "s1") as again:
        again.record(ev.STEP_FINISHED, turnIndex=0, step=1, durationMs=5)
    assert recorder.path.read_bytes().startswith(after_first_process)
    assert [e["type"] for e in lines(recorder.path)] == [
        ev.SESSION_STARTED, ev.TURN_STARTED, ev.STEP_STARTED, ev.STEP_FINISHED]


def test_partial_last_line_is_kept_and_the_next_event_starts_a_new_line(tmp_path: Path):
    path = trace_path(tmp_path, "s1")
    with TraceRecorder(path, "s1") as recorder:
        recorder.record(ev.TURN_STARTED, turnIndex=0, userText="x")
    with path.open("ab") as handle:
        handle.write(b'{"seq": 1, "ts": "2024')  # a crash in the middle of a write
    damaged = path.read_bytes()
    with TraceRecorder(path, "s1") as recorder:
        recorder.record(ev.TURN_FINISHED, turnIndex=0, reason="reply", stepCount=1, durationMs=3)
    data = path.read_bytes()
    assert data.startswith(damaged)
    last = json.loads(data.splitlines()[-1])
    assert last["type"] == ev.TURN_FINISHED and last["seq"] == 1


def test_seq_is_monotonic_from_zero_and_survives_reopen(tmp_path: Path):
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        for i in range(3):
            recorder.record(ev.STEP_STARTED, turnIndex=0, step=i)
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        assert recorder.next_seq == 3
        recorder.record(ev.STEP_STARTED, turnIndex=0, step=3)
        recorder.record(ev.STEP_STARTED, turnIndex=0, step=4)
    events = lines(trace_path(tmp_path, "s1"))
    assert [e["seq"] for e in events] == [0, 1, 2, 3, 4]
    assert all(e["sessionId"] == "s1" and e["ts"].endswith("Z") for e in events)


def test_cap_writes_one_final_trace_truncated_then_drops(tmp_path: Path):
    cap = 700
    with TraceRecorder.for_session(tmp_path, "s1", max_bytes=cap) as recorder:
        for i in range(50):
            recorder.record(ev.TOOL_INVOCATION, tool="os.fs.read", args={"path": f"/f{i}"},
                            status="ok", summary="x" * 40)
        assert recorder.truncated
    path = trace_path(tmp_path, "s1")
    size_at_cap = path.stat().st_size
    events = lines(path)
    assert [e["type"] for e in events].count(ev.TRACE_TRUNCATED) == 1
    assert events[-1]["type"] == ev.TRACE_TRUNCATED
    assert events[-1]["maxBytes"] == cap and events[-1]["droppedType"] == ev.TOOL_INVOCATION
    assert [e["seq"] for e in events] == list(range(len(events)))
    # everything before the marker fit under the cap
    assert len(path.read_bytes()) - len(path.read_bytes().splitlines(keepends=True)[-1]) <= cap

    with TraceRecorder.for_session(tmp_path, "s1", max_bytes=cap) as reopened:
        assert reopened.truncated
        reopened.record(ev.ERROR, category="tool", message="dropped too")
    assert path.stat().st_size == size_at_cap


def test_one_file_per_session(tmp_path: Path):
    a = TraceRecorder.for_session(tmp_path, "alpha")
    b = TraceRecorder.for_session(tmp_path, "beta")
    a.record(ev.TURN_STARTED, turnIndex=0, userText="for alpha")
    b.record(ev.TURN_STARTED, turnIndex=0, userText="for beta")
    a.record(ev.TURN_FINISHED, turnIndex=0, reason="reply", stepCount=1, durationMs=1)
    a.close()
    b.close()
    alpha, beta = lines(trace_path(tmp_path, "alpha")), lines(trace_path(tmp_path, "beta"))
    assert {e["sessionId"] for e in alpha} == {"alpha"} and [e["seq"] for e in alpha] == [0, 1]
    assert {e["sessionId"] for e in beta} == {"beta"} and [e["seq"] for e in beta] == [0]
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == ["alpha.ndjson", "beta.ndjson"]


def test_batch_metadata_only_when_batch_size_above_one(tmp_path: Path):
    assert tool_invocation_fields(0, 1) == {}
    assert tool_invocation_fields(2, 3) == {"batchIndex": 2, "batchSize": 3}
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        recorder.record(ev.TOOL_INVOCATION, tool="reply", args={"text": "hi"}, status="ok", summary="sent",
                        **tool_invocation_fields(0, 1))
        for i in range(2):
            recorder.record(ev.TOOL_INVOCATION, tool="os.fs.read", args={"path": f"/{i}"}, status="ok",
                            summary="read", **tool_invocation_fields(i, 2))
    solo, *batch = lines(trace_path(tmp_path, "s1"))
    assert "batchIndex" not in solo and "batchSize" not in solo
    assert [(e["batchIndex"], e["batchSize"]) for e in batch] == [(0, 2), (1, 2)]
    for bad in [(0, 0), (3, 3), (-1, 2)]:
        with pytest.raises(ValueError, match="batch_index"):
            tool_invocation_fields(*bad)


def test_disabled_recorder_writes_nothing(tmp_path: Path):
    with TraceRecorder.for_session(tmp_path, "s1", enabled=False) as recorder:
        recorder.record(ev.SESSION_STARTED, workingDir="/w")
    assert not (tmp_path / "traces").exists()


def test_each_line_is_readable_before_the_recorder_closes(tmp_path: Path):
    recorder = TraceRecorder.for_session(tmp_path, "s1")
    recorder.record(ev.SESSION_STARTED, workingDir="/w")
    assert lines(recorder.path)[0]["type"] == ev.SESSION_STARTED
    recorder.close()


class Opaque:
    def __str__(self) -> str:
        return "opaque-thing"


def test_unserialisable_values_are_stringified_and_invalid_utf8_replaced(tmp_path: Path):
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        recorder.record(ev.ERROR, category="tool", message="bad \udcff byte", raw=b"ok\xff",
                        where=Path("/tmp/x"), ratio=float("nan"), keyed={1: "int key", (1, 2): "tuple key"})
        recorder.record(ev.ERROR, category="tool", message="plain", obj=Opaque())
    first, second = lines(trace_path(tmp_path, "s1"))
    assert "\ufffd" in first["message"] and first["raw"] == "ok\ufffd"
    assert first["where"] == "/tmp/x" and first["ratio"] == "nan"
    assert first["keyed"] == {"1": "int key", "(1, 2)": "tuple key"}
    assert second["obj"] == "opaque-thing"


def test_trace_file_is_private_to_the_user(tmp_path: Path):
    with TraceRecorder.for_session(tmp_path, "s1") as recorder:
        recorder.record(ev.SESSION_STARTED, workingDir="/w")
    assert stat.S_IMODE(os.stat(recorder.path).st_mode) == 0o600


def test_envelope_fields_cannot_be_overridden(tmp_path: Path):
    recorder = TraceRecorder.for_session(tmp_path, "s1")
    with pytest.raises(ValueError, match="set by the recorder"):
        recorder.record(ev.ERROR, seq=7, category="x", message="y")


def test_session_id_that_is_not_a_file_name_is_rejected(tmp_path: Path):
    for bad in ["../escape", "a/b", ".hidden", ""]:
        with pytest.raises(InvalidSessionIdError, match="cannot name a trace file"):
            TraceRecorder.for_session(tmp_path, bad)
