"""Approval prompts waiting for the host: the gate's `ask` callback for the sidecar.

Each prompt gets an `approvalId`, goes out as an `approval_request` event carrying its
category and label, and waits for `approval_response`. Unanswered within the timeout it
is denied. Answers for ids that are no longer pending get an error that says why (timed
out, already answered, cancelled by abort/shutdown, or never issued).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import attrs

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.sidecar.turn_registry import CURRENT_TURN

RESOLVED_MEMORY = 512  # how many finished ids are remembered for a clear late-answer error
Emit = Callable[[dict[str, Any], str | None], None]  # (event, turn id) -> None


@attrs.define
class _Pending:
    request: Any  # ApprovalRequest
    turn_id: str | None
    future: asyncio.Future[Any]


class PendingApprovals:
    def __init__(self, emit: Emit, timeout_s: float) -> None:
        self._emit = emit
        self.timeout_s = timeout_s
        self._pending: dict[str, _Pending] = {}
        self._resolved: OrderedDict[str, str] = OrderedDict()
        self.closed = False

    def __len__(self) -> int:
        return len(self._pending)

    async def ask(self, request: Any) -> Any:
        from atomic_agent.api import ApprovalAnswer

        if self.closed:
            return ApprovalAnswer.deny()
        approval_id = f"apr_{uuid.uuid4().hex[:16]}"
        turn_id = CURRENT_TURN.get()
        pending = _Pending(request, turn_id, asyncio.get_running_loop().create_future())
        self._pending[approval_id] = pending
        self._emit(self._request_event(approval_id, pending), turn_id)
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

    def answer(self, approval_id: str, decision: str, ttl_s: float | None, uses: int | None) -> bool:
        """Resolve a pending prompt; returns whether it was approved."""
        from atomic_agent.api import AnswerKind, ApprovalAnswer

        pending = self._pending.get(approval_id)
        if pending is None or pending.future.done():
            raise ProtocolError("approval_not_pending", self._why_not_pending(approval_id))
        request = pending.request
        if decision == "session" and not request.can_grant_category:
            raise ProtocolError("invalid_decision", f"decision 'session' is not offered for {approval_id} "
                                f"(category {request.category!r} cannot be granted); answer once or deny")
        if decision == "shape" and not request.can_grant_shape:
            raise ProtocolError("invalid_decision", f"decision 'shape' is not offered for {approval_id} "
                                "(no grantable command shape); answer once, session or deny")
        kind = AnswerKind(decision)
        grant = kind in (AnswerKind.SESSION, AnswerKind.SHAPE)
        answer = ApprovalAnswer(kind, ttl_s, uses) if grant else ApprovalAnswer(kind)
        pending.future.set_result(answer)
        self._resolve(approval_id, "answered", decision)
        return answer.approved

    def cancel_session(self, session_id: str) -> None:
        for approval_id, pending in list(self._pending.items()):
            if pending.request.session_id == session_id:
                self._cancel(approval_id, pending)

    def close(self) -> None:
        """Deny every pending prompt and every later one (the host is gone or leaving)."""
        self.closed = True
        for approval_id, pending in list(self._pending.items()):
            self._cancel(approval_id, pending)

    # -- internals ----------------------------------------------------------------------------
    def _cancel(self, approval_id: str, pending: _Pending) -> None:
        from atomic_agent.api import ApprovalAnswer

        if not pending.future.done():
            pending.future.set_result(ApprovalAnswer.deny())
            self._resolve(approval_id, "cancelled", None)

    def _resolve(self, approval_id: str, outcome: str, decision: str | None) -> None:
        pending = self._pending.get(approval_id)
        self._resolved[approval_id] = outcome
        while len(self._resolved) > RESOLVED_MEMORY:
            self._resolved.popitem(last=False)
        if pending is None:
            return
        event: dict[str, Any] = {"type": "approval_resolved", "approvalId": approval_id,
                                 "sessionId": pending.request.session_id, "outcome": outcome,
                                 "approved": outcome == "answered" and decision != "deny"}
        if decision is not None:
            event["decision"] = decision
        if pending.turn_id:
            event["turnId"] = pending.turn_id
        self._emit(event, pending.turn_id)

    def _why_not_pending(self, approval_id: str) -> str:
        outcome = self._resolved.get(approval_id)
        if outcome == "timed_out":
            return (f"approval {approval_id} timed out after {self.timeout_s:g} s and the call was denied; "
                    "a late answer changes nothing (the agent may ask again)")
        if outcome == "answered":
            return f"approval {approval_id} was already answered; each request takes exactly one answer"
        if outcome == "cancelled":
            return f"approval {approval_id} was cancelled (its turn was aborted or the sidecar is shutting down)"
        return f"no approval {approval_id!r} was ever requested; use the approvalId of an approval_request event"

    def _request_event(self, approval_id: str, pending: _Pending) -> dict[str, Any]:
        r = pending.request
        event: dict[str, Any] = {
            "type": "approval_request", "approvalId": approval_id, "sessionId": r.session_id, "tool": r.tool,
            "category": r.category, "label": r.label, "summary": r.summary, "commandShape": r.command_shape,
            "level": r.level, "canGrantCategory": r.can_grant_category, "canGrantShape": r.can_grant_shape,
            "note": r.note, "timeoutS": self.timeout_s}
        if pending.turn_id:
            event["turnId"] = pending.turn_id
        return event
