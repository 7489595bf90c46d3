"""Approval requests: answer one prompt or question, list what waits for an answer, or move
the standing level (persist, then hot-apply).

Every answer commits to the durable records shared by all processes on the state dir, so a
record raised by serve, Telegram or another sidecar is answered here too: the first valid
answer from any surface wins, and a late one is told who answered, where and when."""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError


async def approval_response(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    from atomic_agent.api import ApprovalNotPendingError, InvalidDecisionError

    decision = request.get("decision")
    approved = request.get("approved")
    if decision is None:
        decision = "once" if approved else "deny"
    elif approved is not None and approved != (decision != "deny"):
        raise ProtocolError("invalid_request", f"approved={str(approved).lower()} contradicts decision {decision!r}; "
                            "send one of them")
    try:
        result = server.approvals.answer(request["approvalId"], decision, request.get("ttlS"), request.get("uses"))
    except ApprovalNotPendingError as exc:  # every reason (late, twice, cancelled, unknown) is one code
        raise ProtocolError("approval_not_pending", exc.message) from None
    except InvalidDecisionError as exc:
        raise ProtocolError("invalid_decision", exc.message) from None
    return {"approvalId": request["approvalId"], "approved": result, "decision": decision}


async def question_response(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    from atomic_agent.api import ApprovalNotPendingError, InvalidDecisionError

    option, text = request.get("option"), request.get("text")
    try:
        record = server.approvals.answer_question(request["approvalId"], option, text)
    except ApprovalNotPendingError as exc:
        raise ProtocolError("approval_not_pending", exc.message) from None
    except InvalidDecisionError as exc:
        raise ProtocolError("invalid_decision", exc.message) from None
    result: dict[str, Any] = {"approvalId": record.id, "state": record.state}
    for key, value in (("option", option), ("text", text), ("answeredBy", record.answered_by),
                       ("surface", record.surface)):
        if value is not None:
            result[key] = value
    return result


def record_view(record: Any, shown_here: bool) -> dict[str, Any]:
    """One pending record as approval_list shows it (the schema wants no null fields)."""
    view = {k: v for k, v in record.as_dict().items() if v is not None}
    view["shownHere"] = shown_here
    return view


async def approval_list(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    """The pending approvals and questions of every process on this state dir, oldest first."""
    approvals = server.approvals
    if approvals.records is None:
        return {"approvals": []}
    here = {str(e.get("approvalId")) for e in approvals.pending()}
    waiting = approvals.waiting_elsewhere()
    own = [r for r in (approvals.record_for(i) for i in sorted(here)) if r is not None and r.state == "pending"]
    records = sorted([*own, *waiting], key=lambda r: r.created_at)
    return {"approvals": [record_view(r, r.id in here) for r in records]}


async def set_approval_level(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    from atomic_agent.api import ConfigError, approval_gate

    runtime = server.runtime
    previous = runtime.gate.level
    try:
        level = runtime.set_approval_level(request["level"])
    except ValueError as exc:  # 4.0, a bool: the schema's "integer" lets a float with no fraction through
        raise ProtocolError("invalid_request", f"{exc}; the level stays at {previous}") from None
    except approval_gate.ApprovalLevelError as exc:
        raise ProtocolError("approval_level_not_applied", str(exc)) from None
    except (ConfigError, OSError) as exc:
        raise ProtocolError("approval_level_not_applied", f"config.json could not be updated, the level stays at "
                            f"{previous}: {exc}") from None
    return {"level": level, "name": runtime.gate.level_name, "previous": previous}


APPROVAL_HANDLERS = {"approval_response": approval_response, "question_response": question_response,
                     "approval_list": approval_list, "set_approval_level": set_approval_level}
