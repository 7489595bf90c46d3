"""GET/POST /api/sessions, GET /api/sessions/search and GET/DELETE /api/sessions/{id}.

Deleting a session also drops its parked undelivered steers; a session with a turn in
flight cannot be deleted (409) until the turn is over.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from atomic_agent.api import text_problem
from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.request_body import json_body


def allowed_working_dir(settings: Any, raw: object) -> Path:
    """A client-chosen working dir, when it lies inside a root the operator chose (the server's
    --cwd or serve.workspaceRoots), compared on canonical paths; 403 otherwise."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise ApiError(400, "workingDir must be a directory path string", code="invalid_value")
    candidate = Path(raw).expanduser()
    if not candidate.is_absolute() or not candidate.is_dir():
        raise ApiError(400, f"workingDir {raw!r} is not an existing absolute directory", code="invalid_value")
    canonical = Path(os.path.realpath(candidate))
    roots = [Path(os.path.realpath(r)) for r in (settings.working_dir, *settings.workspace_roots)]
    for root in roots:
        if os.path.commonpath([str(canonical), str(root)]) == str(root):
            return canonical
    raise ApiError(403, f"workingDir {raw!r} is outside the directories this server's operator allows "
                   f"({', '.join(str(r) for r in roots)}); the working dir decides what the approval ladder treats "
                   "as the workspace, so only the operator widens it (serve.workspaceRoots or --cwd)",
                   code="working_dir_not_allowed")


def require_session(ctx: Any, session_id: str) -> None:
    if not ctx.runtime.sessions.exists(session_id):
        raise ApiError(404, f"no session {session_id!r}; GET /api/sessions lists them", code="session_not_found")


def _summary(ctx: Any, *, id: str, working_dir: object, created_at: str, status: str, title: str | None,
             updated_at: str | None = None, turns: int | None = None) -> dict[str, Any]:
    try:
        origin = ctx.runtime.sessions.first_origin(id)  # who started it: the scheduler, a client, Telegram...
        channel = ctx.runtime.sessions.channel(id)  # what it counts as for search scopes
    except Exception:  # a session with no turn yet
        origin, channel = None, None
    return {"id": id, "object": "session", "channel": channel, "origin": origin, "workingDir": str(working_dir), "createdAt": created_at,
            "updatedAt": updated_at, "status": status, "title": title or "", "turns": turns,
            "busy": ctx.runtime.turns.is_busy(id), "parkedSteers": len(ctx.parked.read(id)[0])}


def _entry(entry: Any) -> dict[str, Any]:
    return {"seq": entry.seq, "kind": entry.kind, "turnIndex": entry.turn_index, "text": entry.text,
            "tool": entry.tool, "args": entry.args, "status": entry.status, "reason": entry.reason,
            "step": entry.step, "batchIndex": entry.batch_index, "createdAt": entry.created_at}


def _state_view(ctx: Any, state: Any) -> dict[str, Any]:
    turns = sum(1 for e in state.entries if e.kind == "turn_started")
    return _summary(ctx, id=state.id, working_dir=state.working_dir, created_at=state.created_at,
                    status=state.status, title=state.title, turns=turns, updated_at=state.updated_at or None)


async def list_sessions(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    raw = request.query_params.get("limit", "50")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise ApiError(400, f"limit must be an integer 1..1000, got {raw!r}", code="invalid_value")
    rows = ctx.runtime.sessions.list(limit=int(raw))
    return JSONResponse({"object": "list", "data": [
        _summary(ctx, id=r["id"], working_dir=r["working_dir"], created_at=r["created_at"], status=r["status"],
                 title=r["title"], updated_at=r["updated_at"], turns=int(r["turns"])) for r in rows]})


SEARCH_CHANNELS = ("local", "http", "telegram")


async def search_sessions(request: Any) -> Any:
    """GET /api/sessions/search?q=words[&limit=N][&channel=C]: what was said, best match first
    (the words are searched literally; FTS syntax is not interpreted)."""
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    query = request.query_params.get("q", "")
    raw = request.query_params.get("limit", "10")
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        raise ApiError(400, f"limit must be an integer 1..100, got {raw!r}", code="invalid_value")
    channels = request.query_params.getlist("channel")
    bad = [c for c in channels if c not in SEARCH_CHANNELS]
    if bad:
        raise ApiError(400, f"channel must be one of {', '.join(SEARCH_CHANNELS)}, got {', '.join(bad)}",
                       code="invalid_value")
    problem = text_problem(query, "q")
    if problem is not None:
        raise ApiError(400, str(problem), code="invalid_text")
    try:
        hits = ctx.runtime.sessions.search(query, channels=set(channels) or None, limit=int(raw))
    except ValueError as exc:  # no words to search for
        raise ApiError(400, str(exc), code="invalid_value") from None
    return JSONResponse({"object": "list", "data": [h.to_json() for h in hits]})


async def create_session(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    body = await json_body(request, ctx.settings.max_body_bytes, required=False)
    working_dir = ctx.settings.working_dir
    if body.get("workingDir") is not None:
        working_dir = allowed_working_dir(ctx.settings, body["workingDir"])
    title = body.get("title")
    if title is not None and not isinstance(title, str):
        raise ApiError(400, "title must be a string", code="invalid_value")
    for name, value in (("title", title), ("workingDir", body.get("workingDir"))):
        problem = text_problem(value, name) if isinstance(value, str) else None
        if problem is not None:
            raise ApiError(400, str(problem), code="invalid_text")
    state = ctx.runtime.open_session(None, working_dir)
    if title:
        state.title = title
        ctx.runtime.sessions.save_state(state)
    return JSONResponse(_state_view(ctx, state), status_code=201, headers={"X-Atomic-Session": state.id})


async def get_session(request: Any) -> Any:
    from starlette.responses import JSONResponse

    from atomic_agent.api import SessionNotFoundError

    ctx = request.app.state.ctx
    session_id = request.path_params["session_id"]
    try:
        state = ctx.runtime.sessions.load(session_id)
    except SessionNotFoundError:
        raise ApiError(404, f"no session {session_id!r}; GET /api/sessions lists them",
                       code="session_not_found") from None
    view = _state_view(ctx, state)
    view["turnSummaries"] = state.turn_summaries()
    view["entries"] = [_entry(e) for e in state.entries]
    return JSONResponse(view)


async def delete_session(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    session_id = request.path_params["session_id"]
    require_session(ctx, session_id)
    if ctx.runtime.turns.is_busy(session_id) or any(t.session_id == session_id for t in ctx.turns.values()):
        raise ApiError(409, f"session {session_id!r} has a turn in flight; delete it once the turn is over",
                       code="session_busy")
    ctx.runtime.sessions.delete(session_id)
    ctx.parked.drop_session(session_id)
    return JSONResponse({"id": session_id, "object": "session.deleted", "deleted": True})
