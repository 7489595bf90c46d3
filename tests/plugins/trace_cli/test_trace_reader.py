"""Listing, finding and reading trace files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from atomic_agent.plugins.trace_cli.trace_reader import TraceNotFoundError, find_trace, list_traces, read_trace
from atomic_agent.tracing import trace_events as ev
from atomic_agent.tracing.trace_paths import trace_path
from atomic_agent.tracing.trace_recorder import TraceRecorder


def write_session(state_dir: Path, session_id: str, events: int, mtime: int) -> None:
    with TraceRecorder.for_session(state_dir, session_id) as recorder:
        for i in range(events):
            recorder.record(ev.STEP_STARTED, turnIndex=0, step=i)
    os.utime(trace_path(state_dir, session_id), (mtime, mtime))


def test_list_is_newest_first_with_size_and_event_count(tmp_path: Path):
    write_session(tmp_path, "old", 2, 1_000_000)
    write_session(tmp_path, "new", 3, 3_000_000)
    write_session(tmp_path, "mid", 1, 2_000_000)
    traces = list_traces(tmp_path)
    assert [t.session_id for t in traces] == ["new", "mid", "old"]
    assert [t.event_count for t in traces] == [3, 1, 2]
    assert traces[0].size_bytes == trace_path(tmp_path, "new").stat().st_size
    assert [t.session_id for t in list_traces(tmp_path, limit=2)] == ["new", "mid"]


def test_list_ignores_the_salt_and_a_missing_traces_dir(tmp_path: Path):
    assert list_traces(tmp_path) == []
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / ".salt").write_text("0" * 32)
    assert list_traces(tmp_path) == []


def test_read_reports_damaged_lines_and_skips_the_line_being_written(tmp_path: Path):
    write_session(tmp_path, "s1", 2, 1_000_000)
    path = trace_path(tmp_path, "s1")
    with path.open("ab") as handle:
        handle.write(b"not json\n[1, 2]\n{\"seq\": 2, \"type\": \"step_st")
    contents = read_trace(path)
    assert [e["seq"] for e in contents.events] == [0, 1]
    assert contents.unreadable_lines == (3, 4)


def test_find_accepts_a_unique_prefix_and_names_how_to_list_ids(tmp_path: Path):
    write_session(tmp_path, "abc-111", 1, 1_000_000)
    write_session(tmp_path, "abc-222", 1, 1_000_000)
    assert find_trace(tmp_path, "abc-1") == trace_path(tmp_path, "abc-111")
    with pytest.raises(TraceNotFoundError, match="ambiguous.*abc-111, abc-222"):
        find_trace(tmp_path, "abc")
    with pytest.raises(TraceNotFoundError, match="atomic-agent trace list"):
        find_trace(tmp_path, "zzz")
