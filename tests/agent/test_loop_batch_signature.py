"""The composite batch signature: the same batch twice in a row, in the same order."""

from __future__ import annotations

from atomic_agent.agent.loop_detector import BATCH_LOOP_LABEL, ToolLoopTracker

A = ("os.fs.read", {"path": "/a"})
B = ("os.fs.read", {"path": "/b"})
C = ("os.fs.glob", {"pattern": "*.py"})


def test_identical_batches_in_a_row_warn() -> None:
    tracker = ToolLoopTracker()
    assert tracker.observe_batch([A, B, C]).level == "none"
    verdict = tracker.observe_batch([A, B, C])
    assert verdict.level == "warn" and verdict.tool == BATCH_LOOP_LABEL and verdict.count == 2
    assert verdict.detector == "generic_repeat"
    assert len(tracker.take_notices()) == 1


def test_permuted_batch_is_not_a_composite_loop() -> None:
    tracker = ToolLoopTracker()
    tracker.observe_batch([A, B, C])
    assert tracker.observe_batch([C, A, B]).level == "none"
    assert tracker.take_notices() == []


def test_arg_key_order_does_not_change_the_batch() -> None:
    tracker = ToolLoopTracker()
    tracker.observe_batch([("os.http.request", {"url": "u", "method": "GET"}), A])
    verdict = tracker.observe_batch([("os.http.request", {"method": "GET", "url": "u"}), A])
    assert verdict.level == "warn"


def test_a_different_step_between_breaks_the_run() -> None:
    tracker = ToolLoopTracker()
    tracker.observe_batch([A, B])
    tracker.observe_batch([A])  # a solo step is not a batch, but it is a step in between
    assert tracker.observe_batch([A, B]).level == "none"


def test_tail_terminal_does_not_change_the_batch() -> None:
    tracker = ToolLoopTracker()
    tracker.observe_batch([A, B])
    assert tracker.observe_batch([A, B, ("reply", {"text": "done"})]).level == "warn"
