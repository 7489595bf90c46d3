"""Approval prompts waiting for an HTTP client: the gate's `ask` callback for `serve`.

A prompt is published as an `approval_request` event (on GET /api/events, and on the
asking turn's stream for extension clients) with its category and label, and listed by
GET /api/approvals until POST /api/approvals/{id} answers it or it times out (denied).
Session/shape grants are offered only when the server is bound to loopback: a remote
client approves one call at a time and cannot raise a session's trust.
"""

from __future__ import annotations

import asyncio
import contextvars
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import attrs

from atomic_agent.plugins.http.error_envelope import ApiError

CURRENT_TURN: contextvars.ContextVar[str | None] = contextvars.ContextVar("serve_turn", default=None)
RESOLVED_MEMORY = 512
DECISIONS = ("once", "session", "shape", "deny")
Emit = Callable[[dict[str, Any], str | None], None]


@attrs.define
class _Pending:
    event: dict[str, Any]
    request: Any
    future: asyncio.Future[Any]


class ApprovalBroker:
    def __init__(self, emit: Emit, timeout_s: float, grants_allowed: bool) -> None:
        self._emit = emit
        self.timeout_s = timeout_s
        self.grants_allowed = grants_allowed
        self.closed = False
        self._pending: dict[str, _Pending] = {}
        self._resolved: OrderedDict[str, str] = OrderedDict()

    def pending(self) -> list[dict[str, Any]]:
        return [p.event for p in self._pending.values()]

    async def ask(self, request: Any) -> Any:
        from atomic_agent.api import ApprovalAnswer

        if self.closed:
            return ApprovalAnswer.deny()
        approval_id = f"apr_{uuid.uuid4().hex[:16]}"
        turn_id = CURRENT_TURN.get()
        grants = self.grants_allowed
        event = {"type": "approval_request", "approvalId": approval_id, "sessionId": request.session_id,
                 "turnId": turn_id, "tool": request.tool, "category": request.category, "label": request.label,
                 "summary": request.summary, "commandShape": request.command_shape, "level": request.level,
                 "canGrantCategory": grants and request.can_grant_category,
                 "canGrantShape": grants and request.can_grant_shape, "note": request.note, "timeoutS": self.timeout_s}
        pending = _Pending(event, request, asyncio.get_running_loop().create_future())
        self._pending[approval_id] = pending
        self._emit(event, turn_id)
        try:
            return await asyncio.wait_for(asyncio.shield(pending.future), self.timeout_s)
        except TimeoutError:
            self._resolve(approval_id, "timed_out", None)
            return ApprovalAnswer.deny()
        except asyncio.CancelledError:
            if not pending.future.done():
                self._resolve(approval_id, "cancelled", None)
            raise
        finally:
            self._pending.pop(approval_id, None)

    def answer(self, approval_id: str, decision: str, ttl_s: float | None = None, uses: int | None = None) -> bool:
        from atomic_agent.api import AnswerKind, ApprovalAnswer

        pending = self._pending.get(approval_id)
        if pending is None or pending.future.done():
            raise self._not_pending(approval_id)
        if decision not in DECISIONS:
            raise ApiError(400, f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}",
                           code="invalid_decision")
        if decision == "session" and not pending.event["canGrantCategory"] or \
                decision == "shape" and not pending.event["canGrantShape"]:
            why = "this server is not bound to loopback" if not self.grants_allowed else "the request does not offer it"
            raise ApiError(400, f"decision {decision!r} is not offered for {approval_id} ({why}); answer once or deny",
                           code="invalid_decision")
        kind = AnswerKind(decision)
        grant = kind in (AnswerKind.SESSION, AnswerKind.SHAPE)
        pending.future.set_result(ApprovalAnswer(kind, ttl_s, uses) if grant else ApprovalAnswer(kind))
        self._resolve(approval_id, "answered", decision)
        return kind is not AnswerKind.DENY

    def cancel_session(self, session_id: str) -> None:
        for approval_id, pending in list(self._pending.items()):
            if pending.request.session_id == session_id:
                self._cancel(approval_id, pending)

    def close(self) -> None:
        self.closed = True
        for approval_id, pending in list(self._pending.items()):
            self._cancel(approval_id, pending)

    def _cancel(self, approval_id: str, pending: _Pending) -> None:
        from atomic_agent.api import ApprovalAnswer

        if not pending.future.done():
            pending.future.set_result(ApprovalAnswer.deny())
            self._resolve(approval_id, "cancelled", None)

    def _resolve(self, approval_id: str, outcome: str, decision: str | None) -> None:
        self._resolved[approval_id] = outcome
        while len(self._resolved) > RESOLVED_MEMORY:
            self._resolved.popitem(last=False)
        pending = self._pending.get(approval_id)
        if pending is None:
            return
        event = {"type": "approval_resolved", "approvalId": approval_id, "sessionId": pending.request.session_id,
                 "turnId": pending.event["turnId"], "outcome": outcome,
                 "approved": outcome == "answered" and decision != "deny", "decision": decision}
        self._emit(event, pending.event["turnId"])

    def _not_pending(self, approval_id: str) -> ApiError:
        outcome = self._resolved.get(approval_id)
        if outcome == "timed_out":
            return ApiError(410, f"approval {approval_id} timed out after {self.timeout_s:g} s and the call was "
                            "denied; a late answer changes nothing", code="approval_timed_out")
        if outcome == "answered":
            return ApiError(410, f"approval {approval_id} was already answered", code="approval_already_answered")
        if outcome == "cancelled":
            return ApiError(410, f"approval {approval_id} was cancelled (its turn ended or the server is stopping)",
                            code="approval_cancelled")
        return ApiError(404, f"no approval {approval_id!r} was ever requested; GET /api/approvals lists the pending "
                        "ones", code="approval_not_found")
