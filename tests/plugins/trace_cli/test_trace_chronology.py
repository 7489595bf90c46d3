"""The chronology `trace show` prints: positions, step filter, summarised vs raw texts."""

from __future__ import annotations

from atomic_agent.plugins.trace_cli.step_attribution import StepPosition, attribute_steps
from atomic_agent.plugins.trace_cli.trace_chronology import build_chronology, render_chronology, summarise_trace
from atomic_agent.tracing import trace_events as ev

LONG_TAIL = "tail line\n" * 50


def events() -> list[dict]:
    raw = [
        {"type": ev.SESSION_STARTED, "workingDir": "/w"},
        {"type": ev.TURN_STARTED, "turnIndex": 0, "userText": "read files"},
        {"type": ev.STEP_STARTED, "turnIndex": 0, "step": 1},
        {"type": ev.PROMPT_CAPTURED, "stablePrefixHash": "ab" * 32, "tail": LONG_TAIL,
         "tokens": {"total": 10, "stablePrefix": 7, "tail": 3, "estimated": False}, "slotId": 0, "cacheReused": False},
        {"type": ev.TOOL_INVOCATION, "tool": "os.fs.read", "args": {"path": "/a"}, "status": "ok",
         "summary": "read 3 lines", "batchIndex": 0, "batchSize": 2},
        {"type": ev.STEP_FINISHED, "turnIndex": 0, "step": 1, "durationMs": 4},
        {"type": ev.STEP_STARTED, "turnIndex": 0, "step": 2},
        {"type": ev.TOOL_INVOCATION, "tool": "reply", "args": {"text": "done"}, "status": "ok", "summary": "sent"},
        {"type": ev.STEP_FINISHED, "turnIndex": 0, "step": 2, "durationMs": 2},
        {"type": ev.TURN_FINISHED, "turnIndex": 0, "reason": "reply", "stepCount": 2, "durationMs": 9},
    ]
    return [{"seq": i, "ts": f"2025-01-01T00:00:0{i % 10}.000Z", "sessionId": "s1", **e} for i, e in enumerate(raw)]


def test_events_take_the_step_of_the_bracket_around_them():
    positions = [pos for pos, _ in attribute_steps(events())]
    assert positions[0] == StepPosition(None, None)
    assert positions[3] == StepPosition(0, 1) and positions[4] == StepPosition(0, 1)
    assert positions[7] == StepPosition(0, 2)
    assert positions[9] == StepPosition(0, None)


def test_step_filter_keeps_only_that_steps_events():
    entries = build_chronology(events(), step=1)
    assert [e.seq for e in entries] == [2, 3, 4, 5]


def test_summarised_show_cuts_long_texts_and_raw_prints_them_whole():
    short = render_chronology(build_chronology(events()))
    assert LONG_TAIL not in short and "chars)" in short and "[0/2] os.fs.read ok" in short
    full = render_chronology(build_chronology(events(), raw=True))
    assert full.count("\n          tail line") == 50  # every line of the tail, as a body block


def test_summary_counts_turns_steps_and_tools():
    summary = summarise_trace(events())
    assert (summary.turns, summary.steps, summary.tool_invocations, summary.truncated) == (1, 2, 2, False)
    assert summary.session_id == "s1"
