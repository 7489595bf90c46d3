"""Approval prompts waiting for a remote host: the gate's `ask` callback for `serve` and the sidecar.

Each prompt gets an `approvalId` and goes out through the host's `emit` callback as an
`approval_request` event (category, label, what may be granted, the timeout); it waits
for `answer` and is denied when the timeout passes, the turn is cancelled or the host
closes. Its end goes out as `approval_resolved`. Answers for ids that are no longer
pending raise `ApprovalNotPendingError` with the precise reason (timed out, already
answered, cancelled, never issued), so the host can tell a late client what happened.
Hosts map these typed errors onto their own wire errors.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Literal

import attrs

from atomic_agent.approval.approval_answers import AnswerKind, ApprovalAnswer
from atomic_agent.approval.approval_records import (
    APPROVAL,
    CANCELLED,
    EXPIRED,
    OPERATOR,
    PENDING,
    QUESTION,
    AlreadyAnsweredError,
    ApprovalExpiredError,
    ApprovalHostClosedError,
    ApprovalNotFoundError,
    ApprovalRecord,
    ApprovalRecordError,
)
from atomic_agent.approval.approval_repository import ApprovalRepository

RESOLVED_MEMORY = 512  # how many finished ids are remembered for a clear late-answer error
DECISIONS = tuple(kind.value for kind in AnswerKind)  # once, session, shape, deny
Emit = Callable[[dict[str, Any], str | None], None]  # (event, turn id) -> None
NotPendingReason = Literal["timed_out", "answered", "cancelled", "unknown"]
# the last three: the durable record refused the answer (see approval_records)
InvalidDecisionReason = Literal["unknown_decision", "grants_not_allowed", "not_offered", "not_yours",
                                "call_changed", "newer_record"]
_RECORD_REFUSALS: dict[str, InvalidDecisionReason] = {
    "approval_not_yours": "not_yours", "approval_call_changed": "call_changed",
    "approval_newer_schema": "newer_record", "invalid_answer": "unknown_decision"}


class ApprovalNotPendingError(Exception):
    """An answer for an id that is not waiting; `reason` says why (late, twice, cancelled, never issued)."""

    def __init__(self, approval_id: str, reason: NotPendingReason, message: str) -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.reason = reason
        self.message = message


class InvalidDecisionError(ValueError):
    """A decision that is not a decision, or a grant this prompt does not offer."""

    def __init__(self, approval_id: str, decision: str, reason: InvalidDecisionReason, message: str) -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.decision = decision
        self.reason = reason
        self.message = message


@attrs.define
class _Pending:
    request: Any  # ApprovalRequest
    turn_id: str | None
    event: dict[str, Any]  # the approval_request as published (replayed to late listeners)
    future: asyncio.Future[ApprovalAnswer]


class PendingApprovals:
    """The prompts waiting for a host's answer.

    `current_turn` reads the asking turn's id (each host keeps its own contextvar).
    `grants_allowed` False offers only once/deny (e.g. a server reachable from other
    machines must not let a remote client raise a session's trust); `grants_refused_why`
    is the host's words for that. `omit_null_ids` leaves out `turnId`/`decision` instead
    of sending null (the sidecar's schema requires strings when present).
    """

    def __init__(self, emit: Emit, timeout_s: float, current_turn: Callable[[], str | None], *,
                 grants_allowed: bool = True, grants_refused_why: str = "this host does not allow grants",
                 omit_null_ids: bool = False) -> None:
        self._emit = emit
        self.timeout_s = timeout_s
        self._current_turn = current_turn
        self.grants_allowed = grants_allowed
        self._grants_refused_why = grants_refused_why
        self._omit_null_ids = omit_null_ids
        self.closed = False
        # the durable records (the runtime's gate keeps them): answers commit there first, so
        # the first answer from any surface wins and a late one hears who answered and when
        self.records: ApprovalRepository | None = None
        self.surface = "serve"
        self.shows_questions = True  # the gate shows ask_user questions here too (answer_question)
        self._pending: dict[str, _Pending] = {}
        self._resolved: OrderedDict[str, NotPendingReason] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pending)

    def pending(self) -> list[dict[str, Any]]:
        """The approval_request events still waiting, oldest first."""
        return [dict(p.event) for p in self._pending.values()]

    async def ask(self, request: Any) -> ApprovalAnswer:
        if self.closed:
            return ApprovalAnswer.deny()
        approval_id = getattr(request, "approval_id", None) or f"apr_{uuid.uuid4().hex[:16]}"
        turn_id = self._current_turn()
        event = self._event({
            "type": "approval_request", "approvalId": approval_id, "sessionId": request.session_id,
            "turnId": turn_id, "tool": request.tool, "category": request.category, "label": request.label,
            "summary": request.summary, "commandShape": request.command_shape, "level": request.level,
            "canGrantCategory": self.grants_allowed and request.can_grant_category,
            "canGrantShape": self.grants_allowed and request.can_grant_shape, "note": request.note,
            "timeoutS": self.timeout_s})
        if getattr(request, "question", None) is not None:  # an ask_user question: answered by option id or text
            event.update(kind="question", question=request.question, canGrantCategory=False, canGrantShape=False)
        pending = _Pending(request, turn_id, event, asyncio.get_running_loop().create_future())
        self._pending[approval_id] = pending
        self._emit(event, turn_id)
        try:
            # shield: a timeout must not cancel the future an answer may be setting
            return await asyncio.wait_for(asyncio.shield(pending.future), self.timeout_s)
        except TimeoutError:
            if self.records is not None:
                self.records.expire(approval_id)
            self._resolve(approval_id, "timed_out", None)
            return ApprovalAnswer.deny()
        except asyncio.CancelledError:
            if not pending.future.done():
                self._resolve(approval_id, "cancelled", None)
            raise
        finally:
            self._pending.pop(approval_id, None)

    def answer(self, approval_id: str, decision: str, ttl_s: float | None = None, uses: int | None = None,
               principal: str = OPERATOR) -> bool:
        """Resolve a pending prompt; returns whether it was approved. With records, the answer
        is committed to the durable record first (a record pending in another process is
        answered there); the first answer from any surface wins."""
        pending = self._pending.get(approval_id)
        record = self.record_for(approval_id) if self.records is not None else None
        if record is not None and record.kind == QUESTION:
            raise InvalidDecisionError(approval_id, decision, "unknown_decision",
                                       f"{approval_id} is a question: answer it with {{\"option\": \"<id>\"}} or "
                                       "{\"text\": \"...\"} (when free text is allowed)")
        if pending is None or pending.future.done():
            if self.records is not None and self._answer_elsewhere(approval_id, decision, ttl_s, uses, principal):
                return decision != "deny"
            raise self._not_pending(approval_id)
        self._check_decision(approval_id, decision, pending.event)
        kind = AnswerKind(decision)
        grant = kind in (AnswerKind.SESSION, AnswerKind.SHAPE)
        answer = ApprovalAnswer(kind, ttl_s, uses) if grant else ApprovalAnswer(kind)
        if self.records is not None and getattr(pending.request, "approval_id", None) == approval_id:
            self._commit(approval_id, decision, ttl_s, uses, principal)
        pending.future.set_result(answer)
        self._resolve(approval_id, "answered", decision)
        return answer.approved

    def cancel_session(self, session_id: str) -> None:
        """Deny the prompts of one session (its turn was aborted); others keep waiting."""
        for approval_id, pending in list(self._pending.items()):
            if pending.request.session_id == session_id:
                if self.records is not None:
                    self.records.cancel(approval_id, "its turn was stopped")
                self._cancel(approval_id, pending)

    def close(self) -> None:
        """Deny every pending prompt and every later one (the host is gone or leaving). A
        durable record is left pending for the next start: it is withdrawn, not answered."""
        self.closed = True
        for approval_id, pending in list(self._pending.items()):
            if self.records is not None and getattr(pending.request, "approval_id", None) == approval_id \
                    and not pending.future.done():
                pending.future.set_exception(ApprovalHostClosedError(f"{approval_id} withdrawn: the host closed"))
                self._resolve(approval_id, "cancelled", None)
                continue
            self._cancel(approval_id, pending)

    def answer_question(self, approval_id: str, option: str | None, text: str | None = None,
                        principal: str = OPERATOR) -> ApprovalRecord:
        """Answer an ask_user question with an option id (or free text); the first answer from
        any surface wins, a late one raises ApprovalNotPendingError saying who answered."""
        if self.records is None:
            raise self._not_pending(approval_id)
        record = self.record_for(approval_id)
        if record is None or record.kind != QUESTION:
            raise ApprovalNotPendingError(approval_id, "unknown", f"no question {approval_id!r}; use the approvalId "
                                                                  "of a pending question")
        self._commit(approval_id, option if option is not None else "text", None, None, principal, text=text)
        pending = self._pending.get(approval_id)
        if pending is not None and not pending.future.done():
            pending.future.set_result(ApprovalAnswer.once())
            self._resolve(approval_id, "answered", option if option is not None else "text")
        return self.records.get(approval_id)

    # -- durable records ----------------------------------------------------------------------
    def _commit(self, approval_id: str, decision: str, ttl_s: float | None, uses: int | None,
                principal: str, text: str | None = None) -> None:
        assert self.records is not None
        bounds = {k: v for k, v in (("ttlS", ttl_s), ("uses", uses)) if v is not None}
        try:
            self.records.answer(approval_id, decision, principal=principal, surface=self.surface,
                                text=text if text is not None else json.dumps(bounds) if bounds else None)
        except (AlreadyAnsweredError, ApprovalExpiredError) as exc:
            raise ApprovalNotPendingError(approval_id, "timed_out" if isinstance(exc, ApprovalExpiredError)
                                          else "answered", exc.message) from None
        except ApprovalRecordError as exc:
            raise InvalidDecisionError(approval_id, decision, _RECORD_REFUSALS.get(exc.code, "unknown_decision"),
                                       exc.message) from None

    def _answer_elsewhere(self, approval_id: str, decision: str, ttl_s: float | None, uses: int | None,
                          principal: str) -> bool:
        """Answer a record this host is not showing (another process asks, and waits on it)."""
        assert self.records is not None
        try:
            record = self.records.get(approval_id)
        except ApprovalNotFoundError:
            return False
        if record.state != PENDING or record.kind != APPROVAL:
            return False  # _not_pending says what became of it
        if decision in ("session", "shape") and not self.grants_allowed:
            raise InvalidDecisionError(approval_id, decision, "grants_not_allowed",
                                       f"decision {decision!r} is not offered for {approval_id} "
                                       f"({self._grants_refused_why}); answer once or deny")
        self._commit(approval_id, decision, ttl_s, uses, principal)
        return True

    def waiting_elsewhere(self) -> list[ApprovalRecord]:
        """Pending records this host is not showing (another process, or a parked turn asks)."""
        if self.records is None:
            return []
        self.records.expire_due()
        return [r for r in self.records.find((PENDING,)) if r.id not in self._pending]

    def record_for(self, approval_id: str) -> ApprovalRecord | None:
        if self.records is None:
            return None
        try:
            return self.records.get(approval_id)
        except ApprovalNotFoundError:
            return None

    # -- internals ----------------------------------------------------------------------------
    def _check_decision(self, approval_id: str, decision: str, event: dict[str, Any]) -> None:
        if decision not in DECISIONS:
            raise InvalidDecisionError(approval_id, decision, "unknown_decision",
                                       f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
        offered = {"session": event["canGrantCategory"], "shape": event["canGrantShape"]}
        if offered.get(decision, True):
            return
        if not self.grants_allowed:
            reason: InvalidDecisionReason = "grants_not_allowed"
            why = self._grants_refused_why
        else:
            reason = "not_offered"
            why = (f"category {event['category']!r} cannot be granted" if decision == "session"
                   else "no grantable command shape")
        choices = ", ".join(["once", *(d for d, ok in offered.items() if ok)]) + " or deny"
        raise InvalidDecisionError(approval_id, decision, reason,
                                   f"decision {decision!r} is not offered for {approval_id} ({why}); answer {choices}")

    def _cancel(self, approval_id: str, pending: _Pending) -> None:
        if not pending.future.done():
            pending.future.set_result(ApprovalAnswer.deny())
            self._resolve(approval_id, "cancelled", None)

    def _resolve(self, approval_id: str, outcome: NotPendingReason, decision: str | None) -> None:
        self._resolved[approval_id] = outcome
        while len(self._resolved) > RESOLVED_MEMORY:
            self._resolved.popitem(last=False)
        pending = self._pending.get(approval_id)
        if pending is None:
            return
        record = self.record_for(approval_id) if outcome == "cancelled" else None
        if record is not None and record.state not in (PENDING, CANCELLED):
            # the gate withdrew the prompt because another surface answered first: say so
            outcome = "timed_out" if record.state == EXPIRED else "answered"
            decision = record.decision
        event = self._event({
            "type": "approval_resolved", "approvalId": approval_id, "sessionId": pending.request.session_id,
            "turnId": pending.turn_id, "outcome": outcome,
            "approved": outcome == "answered" and decision != "deny", "decision": decision})
        self._emit(event, pending.turn_id)

    def _event(self, event: dict[str, Any]) -> dict[str, Any]:
        if self._omit_null_ids:
            for key in ("turnId", "decision"):
                if key in event and event[key] is None:
                    del event[key]
        return event

    def _not_pending(self, approval_id: str) -> ApprovalNotPendingError:
        record = self.record_for(approval_id)
        if record is not None and record.state != PENDING:
            words = {EXPIRED: "timed_out", CANCELLED: "cancelled"}
            reason: NotPendingReason = words.get(record.state, "answered")  # type: ignore[assignment]
            error = ApprovalExpiredError(record) if record.state == EXPIRED else AlreadyAnsweredError(record)
            return ApprovalNotPendingError(approval_id, reason, error.message)
        outcome = self._resolved.get(approval_id, "unknown")
        if outcome == "timed_out":
            message = (f"approval {approval_id} timed out after {self.timeout_s:g} s and the call was denied; "
                       "a late answer changes nothing (the agent may ask again)")
        elif outcome == "answered":
            message = f"approval {approval_id} was already answered; each request takes exactly one answer"
        elif outcome == "cancelled":
            message = f"approval {approval_id} was cancelled (its turn ended or the host is shutting down)"
        else:
            message = (f"no approval {approval_id!r} was ever requested; use the approvalId of a pending "
                       "approval_request event")
        return ApprovalNotPendingError(approval_id, outcome, message)
