"""Replay drift detection: recorded stable-prefix hashes against the current runtime's hash."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.trace_cli.prefix_drift import compare_prefix_hashes
from atomic_agent.plugins.trace_cli.prefix_replay import ReplayUnavailableError, replay_prefix_drift
from atomic_agent.tracing import trace_events as ev
from atomic_agent.tracing.prefix_hash import hash_prefix, load_or_create_salt
from atomic_agent.tracing.trace_events import prompt_captured_fields
from atomic_agent.tracing.trace_recorder import TraceRecorder


def step_events(hashes: list[str | None]) -> list[dict]:
    out: list[dict] = [{"seq": 0, "type": ev.TURN_STARTED, "turnIndex": 0, "userText": "x"}]
    for step, digest in enumerate(hashes, start=1):
        out.append({"seq": len(out), "type": ev.STEP_STARTED, "turnIndex": 0, "step": step})
        captured = {"seq": len(out), "type": ev.PROMPT_CAPTURED, "tail": "t"}
        if digest is not None:
            captured["stablePrefixHash"] = digest
        out.append(captured)
        out.append({"seq": len(out), "type": ev.STEP_FINISHED, "turnIndex": 0, "step": step, "durationMs": 1})
    return out


def test_each_recorded_step_is_reported_as_match_or_drift():
    drifts = compare_prefix_hashes(step_events(["aaa", "bbb", None]), "aaa")
    assert [(d.step, d.status) for d in drifts] == [(1, "match"), (2, "drift"), (3, "unrecorded")]
    assert [d.drifted for d in drifts] == [False, True, False]
    assert drifts[1].recorded_hash == "bbb" and drifts[1].current_hash == "aaa"


def test_step_filter_compares_only_that_step():
    drifts = compare_prefix_hashes(step_events(["aaa", "bbb"]), "aaa", step=2)
    assert [(d.turn_index, d.step, d.status) for d in drifts] == [(0, 2, "drift")]


def write_recorded_session(state_dir: Path, prefixes: list[str]) -> None:
    salt = load_or_create_salt(state_dir)
    with TraceRecorder.for_session(state_dir, "s1") as recorder:
        recorder.record(ev.TURN_STARTED, turnIndex=0, userText="x")
        for step, prefix in enumerate(prefixes, start=1):
            recorder.record(ev.STEP_STARTED, turnIndex=0, step=step)
            recorder.record(ev.PROMPT_CAPTURED, **prompt_captured_fields(
                stable_prefix=prefix, tail="t", salt=salt, total_tokens=2, stable_prefix_tokens=1, tail_tokens=1,
                estimated=True, slot_id=0, cache_reused=step > 1))
            recorder.record(ev.STEP_FINISHED, turnIndex=0, step=step, durationMs=1)


def test_replay_hashes_the_rebuilt_prefix_with_the_state_dir_salt(tmp_path: Path):
    write_recorded_session(tmp_path, ["persona v1", "persona v2"])
    seen: list[tuple[Path, str]] = []

    def rebuild(state_dir: Path, session_id: str) -> str:
        seen.append((state_dir, session_id))
        return "persona v1"

    report = replay_prefix_drift(tmp_path, "s1", rebuild=rebuild)
    assert seen == [(tmp_path, "s1")]
    assert report.current_hash == hash_prefix("persona v1", load_or_create_salt(tmp_path))
    assert [s.status for s in report.steps] == ["match", "drift"] and report.drifted


def test_replay_without_a_salt_cannot_compare(tmp_path: Path):
    write_recorded_session(tmp_path, ["p"])
    (tmp_path / "traces" / ".salt").unlink()
    with pytest.raises(ReplayUnavailableError, match="no salt"):
        replay_prefix_drift(tmp_path, "s1", rebuild=lambda d, s: "p")
