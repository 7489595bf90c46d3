"""`atomic-agent trace list|show|export|replay` on a recorded fixture session."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from .conftest import COMPLETION, LONG_TAIL, OLDER_SESSION, RECORDED_PREFIX, SESSION

Invoke = Callable[..., Result]


def test_list_shows_newest_first_with_event_counts(invoke: Invoke):
    result = invoke("trace", "list")
    assert result.exit_code == 0, result.output
    rows = result.stdout.splitlines()[2:]
    assert rows[0].split()[:2] == [SESSION, "14"] and rows[1].split()[:2] == [OLDER_SESSION, "1"]
    listed = json.loads(invoke("trace", "list", "--json", "--limit", "1").stdout)
    assert [(t["sessionId"], t["eventCount"]) for t in listed] == [(SESSION, 14)]


def test_show_summarises_and_raw_prints_full_texts(invoke: Invoke):
    short = invoke("trace", "show", SESSION)
    assert short.exit_code == 0, short.output
    assert "14 events, 1 turns, 2 steps, 3 tool calls" in short.stdout
    assert "[1/2] os.fs.read ok" in short.stdout
    assert LONG_TAIL.splitlines()[-1] not in short.stdout.splitlines()  # tail lines are not printed one by one
    assert RECORDED_PREFIX not in short.stdout
    full = invoke("trace", "show", SESSION, "--raw")
    assert full.stdout.count("user: a long question line") >= 80  # both prompt tails, whole
    assert COMPLETION in full.stdout


def test_show_step_filter_and_json(invoke: Invoke):
    result = invoke("trace", "show", SESSION, "--step", "2", "--json")
    events = json.loads(result.stdout)
    assert [e["type"] for e in events] == ["step_started", "prompt_captured", "llm_completion",
                                          "tool_invocation", "step_finished"]
    missing = invoke("trace", "show", SESSION, "--step", "9")
    assert missing.exit_code == 2 and "steps recorded: t0.s1, t0.s2" in missing.stderr


def test_export_ndjson_is_the_file_byte_for_byte_and_json_is_an_array(invoke: Invoke, state_dir: Path):
    exported = invoke("trace", "export", SESSION)
    assert exported.exit_code == 0
    assert exported.stdout_bytes == (state_dir / "traces" / f"{SESSION}.ndjson").read_bytes()
    as_json = json.loads(invoke("trace", "export", SESSION, "--format", "json").stdout)
    assert [e["seq"] for e in as_json] == list(range(14))
    bad = invoke("trace", "export", SESSION, "--format", "xml")
    assert bad.exit_code == 2 and "ndjson, json" in bad.stderr


def test_missing_session_says_how_to_find_ids(invoke: Invoke):
    for command in ("show", "export", "replay"):
        result = invoke("trace", command, "nope")
        assert result.exit_code == 2
        assert "no trace for session 'nope'" in result.stderr and "atomic-agent trace list" in result.stderr


@pytest.fixture
def current_prefix(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Install a stand-in prompt builder whose rebuilt prefix the test chooses."""

    def install(prefix: str) -> None:
        import atomic_agent.api

        monkeypatch.setattr(atomic_agent.api.trace_replay, "rebuild_stable_prefix", lambda state_dir, session_id: prefix)

    return install


def test_replay_reports_match_when_the_prefix_is_unchanged(invoke: Invoke, current_prefix: Callable[[str], None]):
    current_prefix(RECORDED_PREFIX)
    result = invoke("trace", "replay", SESSION)
    assert result.exit_code == 0, result.output
    assert "2 prompt(s) checked, 0 drifted" in result.stdout


def test_replay_reports_drift_per_step_and_exits_1(invoke: Invoke, current_prefix: Callable[[str], None]):
    current_prefix("persona v2 + tools v1")
    result = invoke("trace", "replay", SESSION, "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["drifted"] is True
    assert [(s["step"], s["status"]) for s in report["steps"]] == [(1, "drift"), (2, "drift")]
    one = json.loads(invoke("trace", "replay", SESSION, "--step", "2", "--json").stdout)
    assert [s["step"] for s in one["steps"]] == [2]


def test_replay_without_the_salt_fails_clearly(invoke: Invoke, state_dir: Path, current_prefix: Callable[[str], None]):
    current_prefix(RECORDED_PREFIX)
    (state_dir / "traces" / ".salt").unlink()
    result = invoke("trace", "replay", SESSION)
    assert result.exit_code == 2 and "no salt" in result.stderr


def test_trace_plugin_registers_only_the_trace_group(invoke: Invoke):
    result = invoke("trace", "--help")
    assert result.exit_code == 0
    for command in ("list", "show", "export", "replay"):
        assert command in result.stdout
