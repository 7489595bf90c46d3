"""GET /api/capabilities: what this server offers and the live approval level.

`agent.approvalLevel` is read from the running gate (so `--no-approval` and live changes
show honestly), never from the boot config. `agent.approvalRequired` (level < 5) is kept
for binary-era clients and is deprecated: it is coarse at every mid-ladder level.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.serve.client_identity import CLIENT_HEADER, OPERATOR_HEADER
from atomic_agent.plugins.serve.route_chat_completions import EXTENSIONS_HEADER
from atomic_agent.plugins.serve.session_resolver import SESSION_HEADER
from atomic_agent.plugins.serve.undelivered_steers import MAX_PARKED_SESSIONS, MAX_PARKED_STEERS


async def capabilities(request: Any) -> Any:
    from starlette.responses import JSONResponse

    from atomic_agent import __version__
    from atomic_agent.api import MAX_PENDING_STEERS

    ctx = request.app.state.ctx
    gate = ctx.runtime.gate
    level = gate.level
    categories = sorted(gate.categories.values(), key=lambda c: (c.auto_approve_level, c.name))
    return JSONResponse({
        "object": "capabilities",
        "server": {"name": "atomic-agent", "version": __version__},
        "model": ctx.settings.model_name,
        "agent": {"approvalLevel": level, "approvalLevelName": gate.level_name,
                  "approvalRequired": level < 5},
        "approvalCategories": [{"name": c.name, "autoApproveLevel": c.auto_approve_level, "label": c.label,
                                "grantable": gate.is_grantable(c.name)} for c in categories],
        "headers": {"session": SESSION_HEADER, "extensions": EXTENSIONS_HEADER, "client": CLIENT_HEADER,
                    "operator": OPERATOR_HEADER},
        "auth": ctx.settings.api_key is not None,
        "grantsAllowed": ctx.settings.grants_allowed,
        "limits": {"maxPendingSteers": MAX_PENDING_STEERS, "maxParkedSteers": MAX_PARKED_STEERS,
                   "maxParkedSessions": MAX_PARKED_SESSIONS, "approvalTimeoutS": ctx.settings.approval_timeout_s,
                   "maxBodyBytes": ctx.settings.max_body_bytes},
    })
