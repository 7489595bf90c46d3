"""Which session a chat completion runs in.

`X-Atomic-Session: <id>` continues that session (404 when it does not exist; `new`
starts one). Without the header, the `user` field continues the session with that id, or
the session this server started for that `user` earlier (kept in memory for the
server's lifetime). Otherwise every request starts a new session. The response's
`X-Atomic-Session` header always names the session used.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.serve.error_envelope import ApiError

SESSION_HEADER = "x-atomic-session"


def resolve_session(ctx: Any, header: str | None, user: str | None) -> str:
    sessions = ctx.runtime.sessions
    if header and header.strip().lower() != "new":
        session_id = header.strip()
        if not sessions.exists(session_id):
            raise ApiError(404, f"no session {session_id!r} (from the X-Atomic-Session header); GET /api/sessions "
                           "lists them, or send X-Atomic-Session: new", code="session_not_found")
        return session_id
    if user and not header:
        if sessions.exists(user):
            return user
        known = ctx.user_sessions.get(user)
        if known and sessions.exists(known):
            ctx.remember_user_session(user, known)
            return known
    # the turn admitted on it next makes both durable with one shared sync, before the response
    session_id = ctx.runtime.open_session(None, ctx.settings.working_dir, durable=False).id
    if user and not header:
        ctx.remember_user_session(user, session_id)
    return session_id
