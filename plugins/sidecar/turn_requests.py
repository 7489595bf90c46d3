"""Turn requests: send_message (queue a turn), steer_message (redirect the running one), abort
(a stop of the session's running turn, or the withdrawal of a queued one).

Steering never goes through the turn queue (that would park the message behind the very
turn it is meant to correct) and never pre-checks whether a turn is busy: the runtime's
answer is the whole answer, and `steered: false` means nothing was queued.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.sidecar.session_requests import check_request_text, require_session, resolve_working_dir


async def send_message(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    check_request_text(request, "text", "workingDir")  # before a session is made or anything is written
    session_id = request.get("sessionId")
    if session_id is not None:
        if "workingDir" in request:
            raise ProtocolError("invalid_request", "workingDir applies only when send_message creates a new session; "
                                "drop it, or drop sessionId to start a new session there")
        require_session(server, session_id)
    else:
        session_id = server.runtime.open_session(None, resolve_working_dir(server, request.get("workingDir"))).id
    turn_id, position = await server.start_turn(session_id, request["text"], request.get("resendSteerId"))
    return {"turnId": turn_id, "sessionId": session_id, "queuePosition": position}


async def steer_message(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    session_id = request["sessionId"]
    require_session(server, session_id)
    outcome = server.runtime.steer(session_id, request["text"])
    return {"steered": outcome.steered, "outcome": outcome.value}


async def abort(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    session_id = request["sessionId"]
    require_session(server, session_id)
    in_flight = server.registry.of_session(session_id)  # submission order: the first one holds the session
    turn_id = request.get("turnId")
    if turn_id is not None:
        target = server.registry.get(turn_id)
        if target is None or target.session_id != session_id:
            raise ProtocolError("turn_not_found", f"no turn {turn_id!r} is running or queued on session "
                                f"{session_id!r}; it may already have finished (look for its turn_finished)")
    elif in_flight:
        target = in_flight[0]
    else:
        return {"sessionId": session_id, "aborted": []}
    # the session's running turn is a user stop (it ends `stopped`, only its lane is touched);
    # a turn still waiting is withdrawn through its own cancel and never runs
    if target.ledger_turn_id is None or not server.runtime.stop(session_id, target.ledger_turn_id):
        target.cancel.set()
    if in_flight and target is in_flight[0]:
        server.approvals.cancel_session(session_id)  # a prompt of the aborted turn must not outlive it
    return {"sessionId": session_id, "aborted": [target.turn_id]}


TURN_HANDLERS = {"send_message": send_message, "steer_message": steer_message, "abort": abort}
