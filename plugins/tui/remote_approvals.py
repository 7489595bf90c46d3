"""Approvals and `ask_user` questions of a `serve` the TUI is attached to: each
`approval_request` from the event stream (or GET /api/approvals) becomes the same modal as
in-process, one at a time under the approver's lock, and the answer is POSTed to
/api/approvals/{id} as the operator. An `approval_resolved` (another surface answered, the
request timed out, the turn ended) closes the modal unanswered with a notice; a late answer
that serve refuses (410, 403) is a notice, never a traceback."""

from __future__ import annotations

import time
from typing import Any

from atomic_agent.api import approval_gate
from atomic_agent.plugins.tui.serve_attachment import refusal

QUESTION = "question"


def request_from_event(event: dict[str, Any]) -> Any:
    """The modal's request for a serve approval_request event."""
    level = event.get("level")
    return approval_gate.ApprovalRequest(
        str(event.get("sessionId") or "?"), str(event.get("tool") or "?"), str(event.get("category") or "?"),
        str(event.get("label") or event.get("category") or "?"), str(event.get("summary") or ""),
        event.get("commandShape") if isinstance(event.get("commandShape"), str) else None,
        level if isinstance(level, int) else 1, can_grant_category=bool(event.get("canGrantCategory")),
        can_grant_shape=bool(event.get("canGrantShape")), binding=event.get("fingerprint") or None,
        note=str(event.get("note") or f"asked in serve (session {event.get('sessionId')})"),
        approval_id=str(event["approvalId"]))


class RemoteApprovals:
    def __init__(self, app: Any, approver: Any, orchestrator: Any) -> None:
        self.app = app
        self.approver = approver
        self.orchestrator = orchestrator
        self.open: set[str] = set()  # asked and not resolved yet
        self.taken: set[str] = set()  # shown or queued here (each is offered once)
        self.showing: dict[str, Any] = {}
        self.seen_at: dict[str, float] = {}  # approval id -> when it was first known here (monotonic)
        self.answered: list[tuple[str, Any]] = []  # (approval id, decision or option) answered here

    def take(self, event: dict[str, Any]) -> None:
        approval_id = event.get("approvalId")
        if not isinstance(approval_id, str):
            return
        if event.get("type") == "approval_resolved":
            self._resolved(approval_id, event)
            return
        self.open.add(approval_id)
        self.seen_at.setdefault(approval_id, time.monotonic())
        if approval_id in self.taken:
            return
        self.taken.add(approval_id)
        ask = self._question(event) if event.get("kind") == QUESTION else self._approval(event)
        self.app.run_worker(self._guarded(approval_id, ask), group="remote-approvals", exit_on_error=False)

    def sync(self, listed: list[dict[str, Any]], asked_at: float) -> None:
        """serve's whole pending list (GET /api/approvals, asked at monotonic `asked_at`): new
        ones are asked, and an open modal whose request is no longer listed (answered in another
        process) closes — only for requests known before the list was asked, so one that
        arrived on the stream meanwhile is never closed by a list that predates it."""
        ids = {e.get("approvalId") for e in listed}
        for approval_id in [i for i in self.open if i not in ids and self.seen_at.get(i, asked_at) < asked_at]:
            self._resolved(approval_id, {"outcome": "gone"})
        for event in listed:
            self.take(event)

    async def _guarded(self, approval_id: str, work: Any) -> None:
        try:
            await work
        except Exception as exc:
            self.showing.pop(approval_id, None)
            self.app.notify(f"could not show approval {approval_id} here: {type(exc).__name__}: {exc}; "
                            "`atomic-agent approvals` can still answer it", severity="error", timeout=10)

    def _opened(self, approval_id: str) -> Any:
        def opened(modal: Any) -> None:
            self.showing[approval_id] = modal

        return opened

    async def _approval(self, event: dict[str, Any]) -> None:
        from atomic_agent.plugins.tui.approval_modal import ApprovalModal, decision_for

        request = request_from_event(event)
        approval_id = request.approval_id
        self.app.notify(f"approval waiting in serve, session {request.session_id}: {request.label}", timeout=8)
        key = await self.approver.show(ApprovalModal(request), opened=self._opened(approval_id),
                                       still_open=lambda: approval_id in self.open)
        self.showing.pop(approval_id, None)
        if key is None:
            return
        decision = decision_for(request, key).value
        await self._post(approval_id, {"decision": decision}, decision)

    async def _question(self, event: dict[str, Any]) -> None:
        from atomic_agent.plugins.tui.question_modal import NOT_NOW, QuestionModal

        approval_id = str(event["approvalId"])
        question = event.get("question") if isinstance(event.get("question"), dict) else None
        modal = QuestionModal(question or {"prompt": str(event.get("summary") or "")}, str(event.get("sessionId")))
        answer = await self.approver.show(modal, opened=self._opened(approval_id),
                                          still_open=lambda: approval_id in self.open)
        self.showing.pop(approval_id, None)
        if answer is None or answer == NOT_NOW:
            self.taken.discard(approval_id)  # offered again on the next connect (or answered elsewhere)
            return
        how, value = answer
        await self._post(approval_id, {how: value}, value)

    async def _post(self, approval_id: str, body: dict[str, Any], what: Any) -> None:
        import httpx

        try:
            response = await self.orchestrator.client.post(f"/api/approvals/{approval_id}", json=body)
        except httpx.HTTPError as exc:
            self.taken.discard(approval_id)
            self.app.notify(f"the answer to {approval_id} did not reach serve ({type(exc).__name__}); it is asked "
                            "again once the link is back", severity="error", timeout=10)
            return
        if response.status_code != 200:
            try:
                body_json = response.json()
            except ValueError:
                body_json = None
            self.app.notify(f"approval {approval_id}: {refusal(response.status_code, body_json)}",
                            severity="warning", timeout=10)
            return
        self.answered.append((approval_id, what))
        self.app.event_log.add("notice", f"answered {approval_id} {what!r} in serve")

    def _resolved(self, approval_id: str, event: dict[str, Any]) -> None:
        self.open.discard(approval_id)
        self.seen_at.pop(approval_id, None)
        modal = self.showing.pop(approval_id, None)
        if modal is None:
            return
        self.approver.withdraw(modal)
        outcome = event.get("outcome")
        words = {"timed_out": "timed out", "cancelled": "was withdrawn (its turn ended)",
                 "gone": "is no longer waiting (answered or withdrawn elsewhere)"}.get(
            str(outcome), f"was answered elsewhere ({event.get('decision')})")
        self.app.notify(f"approval {approval_id} {words}", timeout=8)
