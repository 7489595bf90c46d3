"""Session requests: create, list, load (with the transcript) and delete."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError


def session_summary(server: Any, *, id: str, working_dir: object, created_at: str, status: str, title: str,
                    updated_at: str | None = None, turns: int | None = None) -> dict[str, Any]:
    summary: dict[str, Any] = {"id": id, "workingDir": str(working_dir), "createdAt": created_at,
                               "updatedAt": updated_at, "status": status, "title": title or "",
                               "busy": server.runtime.turns.is_busy(id)}
    if turns is not None:
        summary["turns"] = turns
    return summary


def state_summary(server: Any, state: Any) -> dict[str, Any]:
    turns = sum(1 for e in state.entries if e.kind == "turn_started")
    return session_summary(server, id=state.id, working_dir=state.working_dir, created_at=state.created_at,
                           status=state.status, title=state.title, turns=turns, updated_at=state.updated_at or None)


def entry_view(entry: Any) -> dict[str, Any]:
    return {"seq": entry.seq, "kind": entry.kind, "turnIndex": entry.turn_index, "text": entry.text,
            "tool": entry.tool, "args": entry.args, "status": entry.status, "reason": entry.reason,
            "step": entry.step, "batchIndex": entry.batch_index, "createdAt": entry.created_at}


def resolve_working_dir(server: Any, raw: str | None) -> Path:
    if raw is None:
        return server.working_dir
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = server.working_dir / path
    if not path.is_dir():
        raise ProtocolError("invalid_request", f"workingDir {raw!r} is not an existing directory; "
                            "pass the absolute path of a folder the agent should work in")
    return path.resolve()


def load_state(server: Any, session_id: str) -> Any:
    from atomic_agent.api import SessionNotFoundError

    try:
        return server.runtime.sessions.load(session_id)
    except SessionNotFoundError as exc:
        raise ProtocolError("session_not_found", f"{exc}; list_sessions shows the ids") from None


def check_request_text(request: dict[str, Any], *fields: str) -> None:
    """invalid_text (nothing written) when a string field is not valid Unicode (a lone surrogate)."""
    from atomic_agent.api import text_problem

    for name in fields:
        value = request.get(name)
        problem = text_problem(value, name) if isinstance(value, str) else None
        if problem is not None:
            raise ProtocolError("invalid_text", str(problem))


def require_session(server: Any, session_id: str) -> None:
    if not server.runtime.sessions.exists(session_id):
        raise ProtocolError("session_not_found", f"no session {session_id!r}; list_sessions shows the ids, "
                            "create_session makes a new one")


async def create_session(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    check_request_text(request, "title", "workingDir")
    working_dir = resolve_working_dir(server, request.get("workingDir"))
    state = server.runtime.open_session(None, working_dir)
    title = request.get("title")
    if title:
        state.title = title
        server.runtime.sessions.save_state(state)
    return {"session": state_summary(server, state)}


async def list_sessions(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    rows = server.runtime.sessions.list(limit=int(request.get("limit", 50)))
    return {"sessions": [session_summary(server, id=r["id"], working_dir=r["working_dir"], created_at=r["created_at"],
                                         updated_at=r["updated_at"], status=r["status"], title=r["title"] or "",
                                         turns=int(r["turns"])) for r in rows]}


async def load_session(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    state = load_state(server, request["sessionId"])
    view = state_summary(server, state)
    view["turnSummaries"] = state.turn_summaries()
    view["entries"] = [entry_view(e) for e in state.entries]
    return {"session": view}


async def delete_session(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    session_id = request["sessionId"]
    require_session(server, session_id)
    if server.registry.of_session(session_id) or server.runtime.turns.is_busy(session_id):
        raise ProtocolError("session_busy", f"session {session_id!r} has a turn running or queued; "
                            "abort it (or wait for turn_finished) before deleting the session")
    server.runtime.sessions.delete(session_id)
    return {"sessionId": session_id, "deleted": True}


SESSION_HANDLERS = {"create_session": create_session, "list_sessions": list_sessions, "load_session": load_session,
                    "delete_session": delete_session}
