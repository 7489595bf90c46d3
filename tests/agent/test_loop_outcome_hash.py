"""Argument and outcome fingerprints used by the loop detector."""

from __future__ import annotations

from atomic_agent.agent.loop_detector import LoopSettings, ToolLoopTracker, hash_args, hash_tool_outcome, strip_volatile
from atomic_agent.hook_records import ToolResult

HTTP = "os.http.request"


def test_args_hash_ignores_key_order() -> None:
    assert hash_args({"a": 1, "b": {"x": 1, "y": 2}}) == hash_args({"b": {"y": 2, "x": 1}, "a": 1})
    assert hash_args({"a": 1}) != hash_args({"a": 2})
    assert hash_args(None) == hash_args({})


def test_strip_volatile_drops_keys_at_any_depth() -> None:
    value = {"id": 1, "body": "x", "meta": {"timeTotalSeconds": 0.3, "status": 500,
                                             "items": [{"createdAt": "now", "name": "n"}]}}
    assert strip_volatile(value) == {"body": "x", "meta": {"status": 500, "items": [{"name": "n"}]}}


def test_volatile_keys_do_not_defeat_no_progress() -> None:
    tracker = ToolLoopTracker(LoopSettings(critical_threshold=5))
    args = {"url": "http://127.0.0.1:9/dead", "method": "POST"}
    for n in range(5):
        result = ToolResult.error("HTTP 503", status=503, timeTotalSeconds=0.1 * n, sizeDownload=100 + n,
                                  requestId=f"req-{n}", headers={"date": f"day {n}"})
        tracker.record_call(HTTP, args)
        tracker.record_outcome(HTTP, args, result)
    assert tracker.no_progress_streak(HTTP, args) == 5
    assert tracker.check(HTTP, args).vetoes


def test_meaningful_detail_changes_the_outcome_hash() -> None:
    a = ToolResult.ok("fetched", body="v1")
    b = ToolResult.ok("fetched", body="v2")
    assert hash_tool_outcome(HTTP, a) != hash_tool_outcome(HTTP, b)
    assert hash_tool_outcome(HTTP, ToolResult.ok("s")) != hash_tool_outcome(HTTP, ToolResult.error("s"))


def test_shell_results_key_on_exit_code_and_output() -> None:
    shell = "os.shell.run"
    first = ToolResult.ok("ran in 12ms", exitCode=1, stdout="boom", durationMs=12, pid=100)
    again = ToolResult.ok("ran in 40ms", exitCode=1, stdout="boom", durationMs=40, pid=200)
    fixed = ToolResult.ok("ran in 40ms", exitCode=0, stdout="boom")
    assert hash_tool_outcome(shell, first) == hash_tool_outcome(shell, again)
    assert hash_tool_outcome(shell, first) != hash_tool_outcome(shell, fixed)


def test_unserialisable_details_hash_without_raising() -> None:
    result = ToolResult.ok("odd", payload=object.__new__(type("Thing", (), {})), tags={"b", "a"}, n={1: "x"})
    assert isinstance(hash_tool_outcome("os.fs.read", result), str)
