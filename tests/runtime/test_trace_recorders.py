"""Trace files are not leaked: one recorder per session, a bounded number of open files, and
none left open after `Runtime.close` (a long-running server once ran out of descriptors)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from atomic_agent.config.app_config import TracingConfig
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.tracing.trace_recorder import TraceRecorders
from tests.agent.loop_harness import make_runtime


def _open_paths_under(root: Path) -> list[str]:
    paths = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(root)) and target.endswith(".ndjson"):
            paths.append(target)
    return paths


async def test_a_closed_runtime_holds_no_trace_file_open(tmp_path: Path):
    rt = make_runtime(tmp_path, ScriptedProvider([calls(("reply", {"text": "ok"}))] * 3))
    for _ in range(3):
        sid = rt.open_session(None, tmp_path).id
        await rt.run_turn("hi", session_id=sid)
    assert len(_open_paths_under(tmp_path)) <= 3  # one per session at most, not one per call
    await rt.close()
    assert _open_paths_under(tmp_path) == []


def test_open_trace_files_are_bounded_and_a_reopened_trace_continues_its_seq(tmp_path: Path):
    recorders = TraceRecorders(tmp_path, lambda: TracingConfig(), max_open=2)
    first = recorders.for_session("aaaaaaaaaaaa")
    first.record("one")
    for sid in ("bbbbbbbbbbbb", "cccccccccccc"):
        recorders.for_session(sid).record("x")
    assert recorders.open_files() == 2 and not first.is_open  # the least recently used was closed
    assert recorders.for_session("aaaaaaaaaaaa") is first  # the same recorder, reopened on use
    first.record("two")
    lines = [json.loads(line) for line in (tmp_path / "traces" / "aaaaaaaaaaaa.ndjson").read_text().splitlines()]
    assert [(e["seq"], e["type"]) for e in lines] == [(0, "one"), (1, "two")]
    recorders.close_all()
    assert recorders.open_files() == 0
