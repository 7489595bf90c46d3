"""The wandering detector: many distinct targets on a web/HTTP/browser tool."""

from __future__ import annotations

from atomic_agent.agent.loop_detector import (
    LoopSettings,
    LoopVerdict,
    ToolLoopTracker,
    is_wandering_prone_tool,
    veto_result,
)
from atomic_agent.hook_records import ToolResult

FETCH = "os.web.fetch"


def probe(tracker: ToolLoopTracker, tool: str, n: int) -> LoopVerdict:
    """Gate one call to a fresh target `n`; returns its verdict."""
    args = {"url": f"https://example.invalid/page-{n}"}
    verdict = tracker.check(tool, args)
    tracker.record_call(tool, args)
    if verdict.vetoes:
        tracker.record_outcome(tool, args, veto_result(tool), vetoed=True)
    else:
        tracker.record_outcome(tool, args, ToolResult.error("404 not found", status=404))
    return verdict


def test_wandering_prone_tools_are_web_http_and_browser() -> None:
    assert is_wandering_prone_tool("os.web.fetch")
    assert is_wandering_prone_tool("os.http.request")
    assert is_wandering_prone_tool("browser.navigate")
    assert not is_wandering_prone_tool("os.fs.read")
    assert not is_wandering_prone_tool("os.web.search")


def test_wandering_warns_then_escalates_for_web_fetch() -> None:
    tracker = ToolLoopTracker(LoopSettings(wandering_threshold=6, wandering_escalation=12))
    verdicts = [probe(tracker, FETCH, n) for n in range(11)]
    assert [v.level for v in verdicts[:5]] == ["none"] * 5
    sixth = verdicts[5]
    assert sixth.level == "warn" and sixth.detector == "wandering" and sixth.count == 6
    assert "web search" in (sixth.notice or "") and "best-effort" in (sixth.notice or "")
    assert all(v.level == "warn" for v in verdicts[5:11])
    assert not tracker.breaker_tripped()
    twelfth = probe(tracker, FETCH, 11)
    assert twelfth.level == "critical" and twelfth.detector == "wandering"
    assert twelfth.breaker and twelfth.trace_level == "breaker"
    assert tracker.is_wandering_escalated(FETCH)
    assert not tracker.is_wandering_escalated("os.http.request")
    assert tracker.breaker_tripped()
    assert tracker.breaker_detector() == "wandering"
    assert tracker.forced_loop_reply()


def test_wandering_warning_is_a_notice_not_a_veto() -> None:
    tracker = ToolLoopTracker()
    for n in range(6):
        probe(tracker, FETCH, n)
    notices = tracker.take_notices()
    assert len(notices) == 1 and FETCH in notices[0]
    assert tracker.veto_streak == 0


def test_repeating_a_known_target_does_not_widen_the_spread() -> None:
    tracker = ToolLoopTracker()
    for n in range(5):
        probe(tracker, FETCH, n)
    assert tracker.distinct_spread(FETCH, {"url": "https://example.invalid/page-0"}) == 5
    assert tracker.distinct_spread(FETCH, {"url": "https://example.invalid/new"}) == 6


def test_browser_tools_wander_too() -> None:
    tracker = ToolLoopTracker()
    verdicts = [probe(tracker, "browser.navigate", n) for n in range(6)]
    assert verdicts[-1].detector == "wandering"


def test_fs_read_over_many_files_is_not_wandering() -> None:
    tracker = ToolLoopTracker()
    for n in range(30):
        args = {"path": f"/src/module_{n}.py"}
        verdict = tracker.check("os.fs.read", args)
        assert verdict.level == "none"
        tracker.record_call("os.fs.read", args)
        tracker.record_outcome("os.fs.read", args, ToolResult.ok(f"contents {n}"))
    assert not tracker.breaker_tripped()
    assert tracker.take_notices() == []
