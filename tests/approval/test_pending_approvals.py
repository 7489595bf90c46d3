"""The core broker behind serve's and the sidecar's approvals: one answer per prompt, a
timeout or close denies, late answers say why, grants only where offered and allowed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from atomic_agent.api import ApprovalAnswer, ApprovalNotPendingError, InvalidDecisionError, PendingApprovals
from atomic_agent.approval import pending_approvals as module
from atomic_agent.approval.approval_answers import AnswerKind, ApprovalRequest


class Host:
    """Records what the broker emits and hands out a fixed turn id."""

    def __init__(self) -> None:
        self.events: list[tuple[dict[str, Any], str | None]] = []
        self.turn_id: str | None = "turn_abc"

    def emit(self, event: dict[str, Any], turn_id: str | None) -> None:
        self.events.append((event, turn_id))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e, _ in self.events if e["type"] == kind]


def request(session_id: str = "s1", category: bool = True, shape: bool = False) -> ApprovalRequest:
    return ApprovalRequest(session_id, "t.gated", "shell", "shell command", "run ls", command_shape="ls",
                           can_grant_category=category, can_grant_shape=shape)


def broker(host: Host, timeout_s: float = 5.0, **kw: Any) -> PendingApprovals:
    return PendingApprovals(host.emit, timeout_s, lambda: host.turn_id, **kw)


async def asked(approvals: PendingApprovals, host: Host, req: ApprovalRequest | None = None) -> tuple[asyncio.Task, str]:
    """Start an ask and wait until its approval_request is out; returns the task and the id."""
    before = len(host.of("approval_request"))
    task = asyncio.create_task(approvals.ask(req or request()))
    while len(host.of("approval_request")) == before:
        await asyncio.sleep(0)
    return task, host.of("approval_request")[-1]["approvalId"]


async def test_an_answer_resolves_the_ask_and_is_published():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host)
    assert len(approvals) == 1 and [p["approvalId"] for p in approvals.pending()] == [approval_id]
    assert approvals.answer(approval_id, "session", ttl_s=60, uses=3) is True
    assert await task == ApprovalAnswer(AnswerKind.SESSION, 60, 3)
    assert len(approvals) == 0 and approvals.pending() == []
    resolved = host.of("approval_resolved")[0]
    assert (resolved["outcome"], resolved["approved"], resolved["decision"]) == ("answered", True, "session")
    assert [turn for _, turn in host.events] == ["turn_abc", "turn_abc"]


async def test_the_request_event_carries_what_the_host_shows():
    host = Host()
    approvals = broker(host, timeout_s=7)
    task, _ = await asked(approvals, host)
    event = host.of("approval_request")[0]
    assert {k: event[k] for k in ("sessionId", "turnId", "tool", "category", "label", "summary", "commandShape",
                                  "canGrantCategory", "canGrantShape", "timeoutS")} == {
        "sessionId": "s1", "turnId": "turn_abc", "tool": "t.gated", "category": "shell", "label": "shell command",
        "summary": "run ls", "commandShape": "ls", "canGrantCategory": True, "canGrantShape": False, "timeoutS": 7}
    approvals.close()
    await task


async def test_null_ids_are_sent_as_null_or_omitted_as_the_host_asks():
    for omit in (False, True):
        host = Host()
        host.turn_id = None
        approvals = broker(host, omit_null_ids=omit)
        task, _ = await asked(approvals, host)
        approvals.close()
        await task
        request_event, resolved = host.of("approval_request")[0], host.of("approval_resolved")[0]
        if omit:
            assert "turnId" not in request_event and "turnId" not in resolved and "decision" not in resolved
        else:
            assert request_event["turnId"] is None and resolved["turnId"] is None and resolved["decision"] is None


async def test_timeout_denies_and_a_late_answer_says_it_timed_out():
    host = Host()
    approvals = broker(host, timeout_s=0.01)
    task, approval_id = await asked(approvals, host)
    assert await task == ApprovalAnswer.deny()
    assert host.of("approval_resolved")[0]["outcome"] == "timed_out"
    with pytest.raises(ApprovalNotPendingError, match="timed out after 0.01 s") as late:
        approvals.answer(approval_id, "once")
    assert late.value.reason == "timed_out" and late.value.approval_id == approval_id


async def test_a_second_answer_is_refused_as_already_answered():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host)
    assert approvals.answer(approval_id, "deny") is False
    assert await task == ApprovalAnswer.deny()
    with pytest.raises(ApprovalNotPendingError, match="already answered") as again:
        approvals.answer(approval_id, "once")
    assert again.value.reason == "answered"


def test_an_unknown_id_was_never_requested():
    approvals = broker(Host())
    with pytest.raises(ApprovalNotPendingError, match="was ever requested") as unknown:
        approvals.answer("apr_00ff", "once")
    assert unknown.value.reason == "unknown"


async def test_an_unknown_decision_is_invalid_and_leaves_the_prompt_pending():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host)
    with pytest.raises(InvalidDecisionError, match="must be one of once, session, shape, deny") as bad:
        approvals.answer(approval_id, "maybe")
    assert bad.value.reason == "unknown_decision" and len(approvals) == 1
    approvals.answer(approval_id, "once")
    assert await task == ApprovalAnswer.once()


async def test_grants_are_refused_when_not_allowed_and_not_offered_in_the_event():
    host = Host()
    approvals = broker(host, grants_allowed=False, grants_refused_why="this server is not bound to loopback")
    task, approval_id = await asked(approvals, host, request(shape=True))
    event = host.of("approval_request")[0]
    assert event["canGrantCategory"] is False and event["canGrantShape"] is False
    for decision in ("session", "shape"):
        with pytest.raises(InvalidDecisionError, match="not bound to loopback.*answer once or deny") as refused:
            approvals.answer(approval_id, decision)
        assert refused.value.reason == "grants_not_allowed" and refused.value.decision == decision
    assert approvals.answer(approval_id, "once") is True
    assert await task == ApprovalAnswer.once()


async def test_a_grant_the_request_does_not_offer_is_refused():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host, request(category=True, shape=False))
    with pytest.raises(InvalidDecisionError, match="no grantable command shape.*once, session or deny") as refused:
        approvals.answer(approval_id, "shape")
    assert refused.value.reason == "not_offered"
    approvals.answer(approval_id, "session")
    assert (await task).kind is AnswerKind.SESSION


async def test_close_denies_pending_and_later_asks():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host)
    approvals.close()
    assert await task == ApprovalAnswer.deny()
    assert host.of("approval_resolved")[0]["outcome"] == "cancelled"
    with pytest.raises(ApprovalNotPendingError, match="was cancelled") as late:
        approvals.answer(approval_id, "once")
    assert late.value.reason == "cancelled"
    assert await approvals.ask(request()) == ApprovalAnswer.deny()
    assert len(host.of("approval_request")) == 1  # a closed broker asks nobody


async def test_cancel_session_only_touches_that_session():
    host = Host()
    approvals = broker(host)
    mine, mine_id = await asked(approvals, host, request("s1"))
    other, other_id = await asked(approvals, host, request("s2"))
    approvals.cancel_session("s1")
    assert await mine == ApprovalAnswer.deny()
    assert [p["approvalId"] for p in approvals.pending()] == [other_id] and not other.done()
    assert approvals.answer(other_id, "once") is True
    assert await other == ApprovalAnswer.once()
    resolved = {e["approvalId"]: e["outcome"] for e in host.of("approval_resolved")}
    assert resolved == {mine_id: "cancelled", other_id: "answered"}


async def test_a_cancelled_ask_is_resolved_as_cancelled():
    host = Host()
    approvals = broker(host)
    task, approval_id = await asked(approvals, host)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert host.of("approval_resolved")[0]["outcome"] == "cancelled" and len(approvals) == 0
    with pytest.raises(ApprovalNotPendingError) as late:
        approvals.answer(approval_id, "once")
    assert late.value.reason == "cancelled"


async def test_resolved_ids_are_remembered_up_to_the_limit(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(module, "RESOLVED_MEMORY", 2)
    host = Host()
    approvals = broker(host)
    ids = []
    for _ in range(3):
        task, approval_id = await asked(approvals, host)
        approvals.answer(approval_id, "once")
        await task
        ids.append(approval_id)
    with pytest.raises(ApprovalNotPendingError) as forgotten:
        approvals.answer(ids[0], "once")
    assert forgotten.value.reason == "unknown"
    with pytest.raises(ApprovalNotPendingError) as remembered:
        approvals.answer(ids[-1], "once")
    assert remembered.value.reason == "answered"
