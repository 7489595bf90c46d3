"""GET /api/approvals (the pending prompts) and POST /api/approvals/{id} (answer one).

Body: {"decision": "once"|"session"|"shape"|"deny"} or {"approved": true|false}, with
optional "ttlS"/"uses" bounding a grant; an ask_user question takes {"option": "<id>"} or
{"text": "..."}. 404 for an id never issued; 410 for one that
timed out, was already answered or was cancelled — a late answer changes nothing.
Only the client that started the asking turn, or the operator, sees and answers an
approval (see `client_identity`); anyone else gets 403 for it and never sees it listed.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.api import ApprovalNotPendingError, InvalidDecisionError
from atomic_agent.plugins.serve.client_identity import caller_of, may_answer, principal_of
from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.request_body import json_body

# why an id is not pending -> (status, code); only a never-issued id is "not found"
NOT_PENDING = {"timed_out": (410, "approval_timed_out"), "answered": (410, "approval_already_answered"),
               "cancelled": (410, "approval_cancelled"), "unknown": (404, "approval_not_found")}
RECORD_REFUSED = {"not_yours": (403, "approval_not_yours"), "call_changed": (409, "approval_call_changed"),
                  "newer_record": (409, "approval_newer_schema")}


async def list_approvals(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    caller = caller_of(request, ctx.settings)
    shown = [e for e in ctx.approvals.pending() if may_answer(caller, ctx, e)]
    # records another process asks (a CLI turn, or a turn parked by a restart) are answerable here too
    elsewhere = [_record_event(r) for r in ctx.approvals.waiting_elsewhere()
                 if r.may_answer(principal_of(caller))]
    return JSONResponse({"object": "list", "data": shown + elsewhere})


def _record_event(record: Any) -> dict[str, Any]:
    return {"type": "approval_request", "approvalId": record.id, "sessionId": record.session_id,
            "turnId": record.turn_id, "tool": record.frozen.tool, "category": record.category,
            "label": record.category, "summary": record.summary, "level": record.level, "canGrantCategory": False,
            "canGrantShape": False, "note": "", "kind": record.kind, "question": record.question,
            "fingerprint": record.fingerprint}


def _positive(body: dict[str, Any], name: str, kind: type) -> Any:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or \
            (kind is int and not isinstance(value, int)):
        raise ApiError(400, f"{name} must be a positive {'integer' if kind is int else 'number'}",
                       code="invalid_value")
    return value


async def answer_approval(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    approval_id = request.path_params["approval_id"]
    caller = caller_of(request, ctx.settings)
    body = await json_body(request, ctx.settings.max_body_bytes)
    asked = next((e for e in ctx.approvals.pending() if e["approvalId"] == approval_id), None)
    if asked is not None and not may_answer(caller, ctx, asked):
        raise ApiError(403, f"approval {approval_id} belongs to another client's turn; it is answered by the client "
                       "that started the turn (same X-Atomic-Client) or from the operator's surface "
                       "(X-Atomic-Operator)", code="approval_not_yours")
    if "option" in body or "text" in body:  # an ask_user question
        option, text = body.get("option"), body.get("text")
        if not (isinstance(option, str) or (option is None and isinstance(text, str))):
            raise ApiError(400, "answer a question with {\"option\": \"<id>\"} or {\"text\": \"...\"}",
                           code="invalid_value")
        try:
            record = ctx.approvals.answer_question(approval_id, option, text, principal=principal_of(caller))
        except ApprovalNotPendingError as exc:
            status, code = NOT_PENDING[exc.reason]
            raise ApiError(status, exc.message, code=code) from None
        except InvalidDecisionError as exc:
            status, code = RECORD_REFUSED.get(exc.reason, (400, "invalid_answer"))
            raise ApiError(status, exc.message, code=code) from None
        return JSONResponse({"approvalId": approval_id, "state": record.state, "option": record.decision,
                             "text": record.answer_text})
    decision, approved = body.get("decision"), body.get("approved")
    if decision is None:
        if not isinstance(approved, bool):
            raise ApiError(400, "send {\"decision\": \"once|session|shape|deny\"} or {\"approved\": true|false}",
                           code="invalid_value")
        decision = "once" if approved else "deny"
    elif approved is not None and approved != (decision != "deny"):
        raise ApiError(400, f"approved={approved} contradicts decision {decision!r}; send one of them",
                       code="invalid_value")
    ttl_s, uses = _positive(body, "ttlS", float), _positive(body, "uses", int)
    try:
        result = ctx.approvals.answer(approval_id, decision, ttl_s, uses, principal=principal_of(caller))
    except ApprovalNotPendingError as exc:
        status, code = NOT_PENDING[exc.reason]
        raise ApiError(status, exc.message, code=code) from None
    except InvalidDecisionError as exc:  # the durable record's refusals: not yours, changed call, newer record
        status, code = RECORD_REFUSED.get(exc.reason, (400, "invalid_decision"))
        raise ApiError(status, exc.message, code=code) from None
    return JSONResponse({"approvalId": approval_id, "approved": result, "decision": decision})
