"""Who is calling `serve`, and which approvals that caller may answer.

An approval is bound to the turn that asked it. It may be answered by:
- with an API key configured: any request bearing the key (the key holder is the operator);
- without one: the client that started the turn — identified by the `X-Atomic-Client`
  header it sent with the chat request and sends again with the answer (16-128 characters
  of letters, digits, `._~-`; a client picks a random one) — or the operator's own
  surface: a request with `X-Atomic-Operator: <token>`, where the token is the content of
  `<state>/serve/operator-token` (mode 0600, created on first start), readable only by
  the user the agent runs as.

A turn started without a client id (a plain OpenAI client) can only be answered from the
operator's surface. The same binding holds for steering and events: a session in which a
client started a turn is steered (while that client's turn runs) and watched on
`/api/events` only by that client and the operator. `GET /api/approvals` and the event stream show a caller only the
approvals it may answer. The same operator credential (token or API key) is needed to
change MCP servers or approve drifted MCP tools, and only it sees their status and drift
events.
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.serve.error_envelope import ApiError

CLIENT_HEADER = "x-atomic-client"
OPERATOR_HEADER = "x-atomic-operator"
TOKEN_DIR = "serve"
TOKEN_FILE = "operator-token"
API_KEY_FILE = "api-key"
_CLIENT_ID = re.compile(r"\A[A-Za-z0-9._~-]{16,128}\Z")


@attrs.frozen
class Caller:
    client: str | None  # the X-Atomic-Client id, when sent
    operator: bool  # the operator token (or the API key) was presented


def operator_token_path(state_dir: Path) -> Path:
    return state_dir / TOKEN_DIR / TOKEN_FILE


def api_key_path(state_dir: Path) -> Path:
    return state_dir / TOKEN_DIR / API_KEY_FILE


def ensure_operator_token(state_dir: Path) -> str:
    """The operator token, created (0600, in a 0700 dir) when missing."""
    return ensure_secret_file(operator_token_path(state_dir))[0]


def ensure_api_key(state_dir: Path) -> tuple[str, bool]:
    """serve's generated API key and whether it was created just now (0600, in a 0700 dir)."""
    return ensure_secret_file(api_key_path(state_dir))


def ensure_secret_file(path: Path) -> tuple[str, bool]:
    """A random secret kept in `path` (created 0600 when missing or too short to be one)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        token = path.read_text(encoding="ascii").strip()
        if len(token) >= 32:
            return token, False
        path.unlink()
        return ensure_secret_file(path)
    token = secrets.token_hex(32)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    return token, True


def caller_of(request: Any, settings: Any) -> Caller:
    raw = request.headers.get(CLIENT_HEADER)
    client = None
    if raw is not None:
        raw = raw.strip()
        if not _CLIENT_ID.match(raw):
            raise ApiError(400, f"{CLIENT_HEADER} must be 16-128 characters of letters, digits and ._~- (pick a random "
                           "id per client and send it with every request)", code="invalid_client_id")
        client = raw
    if settings.api_key:
        return Caller(client, True)  # BearerAuth let it in: the key holder is the operator
    given = request.headers.get(OPERATOR_HEADER)
    token = settings.operator_token
    operator = bool(given and token and hmac.compare_digest(given.strip().encode(), token.encode()))
    if given and not operator:
        raise ApiError(403, f"the {OPERATOR_HEADER} token is not valid", code="invalid_operator_token")
    return Caller(client, operator)


def may_answer(caller: Caller, ctx: Any, event: dict[str, Any]) -> bool:
    """Whether `caller` may see and answer the approval `event` (approval_request/resolved)."""
    if caller.operator:
        return True
    turn = ctx.turns.get(event.get("turnId") or "")
    return turn is not None and turn.client is not None and caller.client is not None and \
        hmac.compare_digest(turn.client, caller.client)


def _is_client(caller: Caller, clients: set[str]) -> bool:
    return caller.client is not None and any(hmac.compare_digest(c, caller.client) for c in clients)


def may_steer(caller: Caller, ctx: Any, session_id: str) -> bool:
    """Whether `caller` may steer the turn running on `session_id`: the operator always; else
    every HTTP turn on the session that was started with a client id must be the caller's
    (turns started without one are steerable as before — only a keyless server has them
    unowned, and it warns that every local user can drive it)."""
    if caller.operator:
        return True
    owners = {t.client for t in list(ctx.turns.values()) if t.session_id == session_id and t.client}
    return not owners or (len(owners) == 1 and _is_client(caller, owners))


def visible(caller: Caller, ctx: Any, event: dict[str, Any]) -> bool:
    """Approval events are shown only to who may answer them, MCP server status and drift
    events only to the operator (who configured the servers and approves drift); the events
    of a session a client started turns in only to that client and the operator; other
    events to everyone."""
    kind = event.get("type")
    if kind in ("approval_request", "approval_resolved"):
        return may_answer(caller, ctx, event)
    if isinstance(kind, str) and kind.startswith("mcp_"):
        return caller.operator
    session = event.get("sessionId")
    if caller.operator or not isinstance(session, str):
        return True
    owners = ctx.session_clients.get(session)
    return not owners or _is_client(caller, owners)


def principal_of_client(client: str) -> str:
    """How a serve client is named on a durable approval record (who may answer it)."""
    return f"serve-client:{client}"


def principal_of(caller: Caller) -> str:
    """The principal an answer from `caller` is recorded under: the operator, a client, or nobody known."""
    if caller.operator:
        return "operator"
    return principal_of_client(caller.client) if caller.client else "serve-anonymous"
