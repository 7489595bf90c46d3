"""Approval requests: answer one prompt, or move the standing level (persist, then hot-apply)."""

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


APPROVAL_HANDLERS = {"approval_response": approval_response, "set_approval_level": set_approval_level}
