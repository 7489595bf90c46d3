"""Approvals raised by other surfaces (a Telegram session, a `serve` client, another process
sharing the state dir) shown and answered in the TUI.

Every approval is a durable record in `<state>/approvals.sqlite`, answered once from any
surface. The watcher reads the pending records every second; a record the TUI's own
approver was not handed (and that has waited at least one poll, so a request the approver
is about to take is never shown twice) opens the same approval modal, one at a time with
the TUI's own prompts. The answer is committed to the record (a changed call is a new record, so an
answer never carries over to it) as the operator, surface "tui"; when
another surface answered first, or the record expired, the modal closes and a notice says
who answered, where and when — the record's own words.

A record from another process carries no command shape, so the modal offers once, deny and
(where the category is grantable here) the session grant; the asking gate decides the grant
from its own request, never from the answer.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.api import ApprovalNotPendingError, InvalidDecisionError, PendingApprovals, approval_gate

POLL_S = 1.0
SURFACE = "tui"
# states and kinds as approvals.sqlite stores them (record schema 1)
PENDING, EXPIRED, CANCELLED, APPROVAL = "pending", "expired", "cancelled", "approval"


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

    @property
    def enabled(self) -> bool:
        return self.records is not None and self.approver is not None

    def poll(self) -> None:
        if not self.enabled:
            return
        try:
            pending = [r for r in self.answers.waiting_elsewhere() if r.kind == APPROVAL]
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
            self.taken.add(record.id)
            self.app.run_worker(self._ask(record), group="shared-approvals", exit_on_error=False)
        self.seen = ids

    async def _ask(self, record: Any) -> None:
        request = request_for(record, self.app.runtime.gate)
        self.app.notify(f"approval waiting from session {record.session_id}: {request.label}", timeout=8)

        def opened(modal: Any) -> None:
            self.showing[record.id] = modal

        key = await self.approver.show(request, opened=opened, still_open=lambda: self._pending(record.id))
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
