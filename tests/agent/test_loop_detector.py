"""ToolLoopTracker: repeat warnings, no-progress vetoes, the veto breaker, notices."""

from __future__ import annotations

from typing import Any

from atomic_agent.agent.loop_detector import LoopSettings, LoopVerdict, ToolLoopTracker, is_loop_veto, veto_result
from atomic_agent.hook_records import ToolResult

READ = "os.fs.read"
ARGS = {"path": "/tmp/a.txt"}
SAME = ToolResult.ok("hello world", bytes=11)


def gate(tracker: ToolLoopTracker, tool: str, args: dict[str, Any], result: ToolResult) -> tuple[LoopVerdict, ToolResult]:
    """What the batch executor does for one solo call: check, commit, veto or run, record."""
    verdict = tracker.check(tool, args)
    tracker.record_call(tool, args)
    if verdict.vetoes or tracker.breaker_tripped():
        veto = veto_result(tool)
        tracker.record_outcome(tool, args, veto, vetoed=True)
        return verdict, veto
    tracker.record_outcome(tool, args, result)
    return verdict, result


def test_first_calls_pass_clean() -> None:
    tracker = ToolLoopTracker()
    for _ in range(3):
        verdict, _result = gate(tracker, READ, ARGS, SAME)
        assert verdict.level == "none" and verdict.detector is None and verdict.notice is None


def test_warns_at_repeat_threshold() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=3, critical_threshold=5))
    levels = [gate(tracker, READ, ARGS, SAME)[0] for _ in range(4)]
    assert [v.level for v in levels] == ["none", "none", "none", "warn"]
    assert levels[3].detector == "generic_repeat"
    assert levels[3].count == 3
    assert READ in (levels[3].notice or "")


def test_repeat_warning_counts_args_only() -> None:
    tracker = ToolLoopTracker()
    for i in range(3):
        gate(tracker, READ, ARGS, ToolResult.ok(f"version {i}"))
    verdict = tracker.check(READ, ARGS)
    assert verdict.level == "warn" and verdict.detector == "generic_repeat"


def test_vetoes_at_no_progress_streak() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5))
    verdicts = [gate(tracker, READ, ARGS, SAME) for _ in range(6)]
    assert [v.level for v, _ in verdicts[:5]] == ["none", "none", "none", "warn", "warn"]
    last, result = verdicts[5]
    assert last.level == "critical" and last.detector == "no_progress" and last.vetoes
    assert is_loop_veto(result)
    assert result.details["deniedReason"] == "tool-loop"
    assert "change approach" in result.summary.lower()


def test_veto_result_is_recognised_and_ordinary_errors_are_not() -> None:
    assert is_loop_veto(veto_result("os.web.fetch"))
    assert not is_loop_veto(ToolResult.error("file not found", deniedReason="approval"))
    assert not is_loop_veto(ToolResult.ok("fine", deniedReason="tool-loop"))


def test_vetoed_results_do_not_inflate_streak() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5, breaker_veto_streak=10))
    for _ in range(5):
        gate(tracker, READ, ARGS, SAME)
    assert tracker.no_progress_streak(READ, ARGS) == 5
    for _ in range(4):
        verdict, _ = gate(tracker, READ, ARGS, SAME)
        assert verdict.vetoes
    assert tracker.no_progress_streak(READ, ARGS) == 5
    assert tracker.veto_streak == 4


def test_breaker_after_consecutive_vetoes() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5, breaker_veto_streak=3))
    for _ in range(5):
        gate(tracker, READ, ARGS, SAME)
    tripped = []
    for _ in range(3):
        gate(tracker, READ, ARGS, SAME)
        tripped.append(tracker.breaker_tripped())
    assert tripped == [False, False, True]
    assert tracker.breaker_detector() == "no_progress"
    assert not tracker.is_wandering_escalated()


def test_real_outcome_resets_the_veto_streak() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5, breaker_veto_streak=3))
    for _ in range(5):
        gate(tracker, READ, ARGS, SAME)
    gate(tracker, READ, ARGS, SAME)
    gate(tracker, READ, ARGS, SAME)
    assert tracker.veto_streak == 2
    gate(tracker, READ, {"path": "/tmp/other.txt"}, ToolResult.ok("other"))
    assert tracker.veto_streak == 0
    assert not tracker.breaker_tripped()


def test_different_results_break_the_streak() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5))
    for _ in range(4):
        gate(tracker, READ, ARGS, SAME)
    gate(tracker, READ, ARGS, ToolResult.ok("the file changed"))
    assert tracker.no_progress_streak(READ, ARGS) == 1
    verdict = tracker.check(READ, ARGS)
    assert verdict.level == "warn"  # still a repeat, but not a veto


def test_error_details_distinguish_outcomes() -> None:
    tracker = ToolLoopTracker()
    gate(tracker, READ, ARGS, ToolResult.error("failed", code="ENOENT"))
    gate(tracker, READ, ARGS, ToolResult.error("failed", code="EACCES"))
    assert tracker.no_progress_streak(READ, ARGS) == 1


def test_streak_tolerates_interleaved_calls() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5, warning_threshold=5))
    for i in range(5):
        gate(tracker, READ, ARGS, SAME)
        gate(tracker, "os.fs.list", {"path": f"/tmp/{i}"}, ToolResult.ok(f"listing {i}"))
    assert tracker.no_progress_streak(READ, ARGS) == 5
    assert tracker.check(READ, ARGS).vetoes


def test_terminal_verbs_are_never_gated() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=1, critical_threshold=1, breaker_veto_streak=1))
    for _ in range(10):
        tracker.record_call("reply", {"text": "hi"})
        tracker.record_outcome("reply", {"text": "hi"}, ToolResult.ok("hi"))
    assert tracker.check("reply", {"text": "hi"}).level == "none"
    assert tracker.check("finish", {}).level == "none"
    assert tracker.repeat_count("reply", {"text": "hi"}) == 0


def test_duplicate_within_one_batch_sees_its_sibling() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=1))
    verdicts = []
    for _ in range(2):  # phase 1: both calls gated before either runs
        verdicts.append(tracker.check(READ, ARGS))
        tracker.record_call(READ, ARGS)
    assert [v.level for v in verdicts] == ["none", "warn"]
    for _ in range(2):  # phase 2: outcomes fill the in-flight entries
        tracker.record_outcome(READ, ARGS, SAME)
    assert tracker.no_progress_streak(READ, ARGS) == 2
    assert tracker.repeat_count(READ, ARGS) == 2


def test_pending_calls_do_not_count_as_outcomes() -> None:
    tracker = ToolLoopTracker()
    tracker.record_call(READ, ARGS)
    assert tracker.no_progress_streak(READ, ARGS) == 0
    assert tracker.repeat_count(READ, ARGS) == 1


def test_a_loop_veto_outcome_counts_as_vetoed_even_without_the_flag() -> None:
    tracker = ToolLoopTracker()
    tracker.record_call(READ, ARGS)
    tracker.record_outcome(READ, ARGS, veto_result(READ))
    assert tracker.veto_streak == 1
    assert tracker.no_progress_streak(READ, ARGS) == 0


def test_outcome_without_a_recorded_call_is_still_kept() -> None:
    tracker = ToolLoopTracker()
    tracker.record_outcome(READ, ARGS, SAME)
    assert tracker.no_progress_streak(READ, ARGS) == 1


def test_history_is_a_ring_buffer_of_history_size() -> None:
    settings = LoopSettings(history_size=12, wandering_threshold=2, wandering_escalation=3,
                            warning_threshold=3, critical_threshold=3)
    tracker = ToolLoopTracker(settings)
    for _ in range(3):
        gate(tracker, READ, ARGS, SAME)
    for i in range(12):
        gate(tracker, "os.fs.list", {"path": f"/d{i}"}, ToolResult.ok(f"{i}"))
    assert tracker.repeat_count(READ, ARGS) == 0
    assert tracker.check(READ, ARGS).level == "none"


def test_notices_are_deduplicated_and_bucketed() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=3, critical_threshold=50, history_size=60))
    counts = []
    for _ in range(12):
        gate(tracker, READ, ARGS, ToolResult.ok("x"))
        counts.append(len(tracker.take_notices()))
    # calls 4 and 9 (repeat counts 3 and 8) carry a notice; the steps between stay quiet
    assert counts == [0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0]
    assert tracker.take_notices() == []


def test_take_notices_drops_duplicate_texts() -> None:
    tracker = ToolLoopTracker(LoopSettings(warning_threshold=1, critical_threshold=50, history_size=60))
    for path in ("/tmp/a", "/tmp/b"):  # two issues whose advisories read the same
        tracker.record_call(READ, {"path": path})
        tracker.record_call(READ, {"path": path})
    tracker.record_call("os.fs.glob", {"pattern": "*"})
    tracker.record_call("os.fs.glob", {"pattern": "*"})
    notices = tracker.take_notices()
    assert len(notices) == 2
    assert any("os.fs.glob" in n for n in notices) and any(READ in n for n in notices)


def test_forced_reply_is_graceful_text() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=3, warning_threshold=3, breaker_veto_streak=1))
    for _ in range(4):
        gate(tracker, READ, ARGS, SAME)
    assert tracker.breaker_tripped()
    reply = tracker.forced_loop_reply()
    assert reply.strip() and "error" not in reply.lower()
