"""Approvals and `ask_user` questions raised by other surfaces (a Telegram session, a `serve`
client, another process sharing the state dir) shown and answered in the TUI.

Every approval and question is a durable record in `<state>/approvals.sqlite`, answered once
from any surface. The watcher reads the pending records every second; a record the TUI's
own approver was not handed (and that has waited at least one poll, so a request the
approver is about to take is never shown twice) opens a modal, one at a time with the TUI's
own prompts. The answer is committed to the record (a changed call is a new record, so an
answer never carries over to it) as the operator, surface "tui"; when another surface
answered first, or the record expired, the modal closes and a notice says who answered,
where and when — the record's own words.

A record from another process carries no command shape, so the approval modal offers
once, deny and (where the category is grantable here) the session grant; the asking gate
decides the grant from its own request, never from the answer. Questions come here too, the
TUI's own included (its approver does not take questions, so the gate leaves them to the
records): the question modal answers with an option or typed text; Esc puts one off for a
minute.
"""

from __future__ import annotations

import time
from typing import Any

from atomic_agent.api import ApprovalNotPendingError, InvalidDecisionError, PendingApprovals, approval_gate

POLL_S = 1.0
SURFACE = "tui"
# states and kinds as approvals.sqlite stores them (record schema 1)
PENDING, EXPIRED, CANCELLED, APPROVAL, QUESTION = "pending", "expired", "cancelled", "approval", "question"
NOT_NOW_S = 60.0  # a question put off with Esc comes back after this long (if still open)


def request_for(record: Any, gate: Any) -> Any:
    """The modal's request for a record another surface raised."""
    try:
        category = gate.category(record.category)
        label, grantable = category.label, gate.is_grantable(record.category)
    except Exception:  # a category this process does not know: shown by name, no grant offered
        label, grantable = record.category, False
    return approval_gate.ApprovalRequest(
        record.session_id, record.frozen.tool or "?", record.category, label, record.summary, None, record.level,
        can_grant_category=grantable, can_grant_shape=False, binding=record.fingerprint,
        note=f"asked outside this window (session {record.session_id}); answered once, from any surface",
        approval_id=record.id, expires_at=record.expires_at)


def settled_words(record: Any) -> str:
    if record.state == EXPIRED:
        return f"approval {record.id} expired unanswered"
    if record.state == CANCELLED:
        return f"approval {record.id} was withdrawn ({record.answer_text or 'its turn ended'})"
    where = f" via {record.surface}" if record.surface else ""
    return f"approval {record.id} was answered {record.decision!r} by {record.answered_by or 'someone'}{where}"


class SharedApprovals:
    """Polls the records and shows the ones raised elsewhere; owned by the app."""

    def __init__(self, app: Any, approver: Any) -> None:
        self.app = app
        self.approver = approver
        self.records = app.runtime.gate.records
        # the embedders' view of the records: answers commit there, the first from any surface wins
        self.answers = PendingApprovals(lambda _event, _turn: None, 0.0, lambda: None)
        self.answers.records = self.records
        self.answers.surface = SURFACE
        self.seen: set[str] = set()  # pending on an earlier poll
        self.taken: set[str] = set()  # queued or shown here (each record is offered once)
        self.showing: dict[str, Any] = {}  # approval id -> its open modal
        self.not_now: dict[str, float] = {}  # question id -> when it may be shown again

    @property
    def enabled(self) -> bool:
        return self.records is not None and self.approver is not None

    def poll(self) -> None:
        if not self.enabled:
            return
        try:
            pending = [r for r in self.answers.waiting_elsewhere() if r.kind in (APPROVAL, QUESTION)]
        except Exception as exc:  # a locked or unreadable file: try again next second
            self.app.event_log.add("notice", f"could not read the shared approvals: {type(exc).__name__}: {exc}")
            return
        ids = {r.id for r in pending}
        for approval_id in [i for i in self.showing if i not in ids]:
            self._settled_elsewhere(approval_id)
        for record in reversed(pending):  # oldest first
            if record.id in self.taken or record.id in self.approver.asked:
                continue
            if record.id not in self.seen:
                continue  # one poll's grace: the TUI's own approver may be about to take it
            if self.not_now.get(record.id, 0.0) > self._now():
                continue
            self.taken.add(record.id)
            ask = self._question(record) if record.kind == QUESTION else self._ask(record)
            self.app.run_worker(self._guarded(record, ask), group="shared-approvals", exit_on_error=False)
        self.seen = ids

    async def _guarded(self, record: Any, work: Any) -> None:
        """A failure to show or answer a record is a notice; the record stays for any surface."""
        try:
            await work
        except Exception as exc:
            self.showing.pop(record.id, None)
            self.app.notify(f"could not show {record.kind} {record.id} here: {type(exc).__name__}: {exc}; "
                            "`atomic-agent approvals` or another surface can still answer it", severity="error",
                            timeout=10)

    async def _ask(self, record: Any) -> None:
        from atomic_agent.plugins.tui.approval_modal import ApprovalModal

        request = request_for(record, self.app.runtime.gate)
        self.app.notify(f"approval waiting from session {record.session_id}: {request.label}", timeout=8)

        def opened(modal: Any) -> None:
            self.showing[record.id] = modal

        key = await self.approver.show(ApprovalModal(request), opened=opened,
                                       still_open=lambda: self._pending(record.id))
        self.showing.pop(record.id, None)
        if key is None:
            return  # settled elsewhere (said by _settled_elsewhere) or the app is closing
        offered = approval_gate.offered_answers(request)
        kind = next((a.kind for a in offered if a.key == key), approval_gate.AnswerKind.DENY)
        try:
            self.answers.answer(record.id, kind.value)  # as the operator: this terminal is the state dir's owner
        except (ApprovalNotPendingError, InvalidDecisionError) as exc:
            self.app.notify(exc.message, severity="warning", timeout=10)  # who answered first, or why not
            return
        self.app.event_log.add("notice", f"answered {record.id} {kind.value!r} here (session {record.session_id})")

    async def _question(self, record: Any) -> None:
        from atomic_agent.plugins.tui.question_modal import NOT_NOW, QuestionModal

        def opened(modal: Any) -> None:
            self.showing[record.id] = modal

        modal = QuestionModal(record.question or {"prompt": record.summary}, record.session_id)
        answer = await self.approver.show(modal, opened=opened, still_open=lambda: self._pending(record.id))
        self.showing.pop(record.id, None)
        if answer == NOT_NOW:
            self.taken.discard(record.id)
            self.not_now[record.id] = self._now() + NOT_NOW_S
            return
        if answer is None:
            return
        how, value = answer
        try:
            self.answers.answer_question(record.id, value if how == "option" else None,
                                         value if how == "text" else None)
        except (ApprovalNotPendingError, InvalidDecisionError) as exc:
            self.app.notify(exc.message, severity="warning", timeout=10)
            return
        self.app.event_log.add("notice", f"answered question {record.id} here (session {record.session_id})")

    @staticmethod
    def _now() -> float:
        return time.monotonic()

    def _pending(self, approval_id: str) -> bool:
        try:
            return bool(self.records.get(approval_id).state == PENDING)
        except Exception:
            return False

    def _settled_elsewhere(self, approval_id: str) -> None:
        modal = self.showing.pop(approval_id, None)
        if modal is not None:
            self.approver.withdraw(modal)
        try:
            self.app.notify(settled_words(self.records.get(approval_id)), timeout=8)
        except Exception:
            pass
