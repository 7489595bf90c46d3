"""`hello`, `get_capabilities` and `shutdown`: protocol version, what this sidecar can do, live state.

The approval level reported is the live gate's (a `--no-approval` boot or a level change
shows honestly), never the boot-time config snapshot.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.sidecar.protocol_schema import PROTOCOL_VERSION, REQUEST_TYPES, event_types


def server_info() -> dict[str, str]:
    from atomic_agent import __version__

    return {"name": "atomic-agent", "version": __version__}


def capabilities(server: Any) -> dict[str, Any]:
    from atomic_agent.api import MAX_PENDING_STEERS

    gate = server.runtime.gate
    level = gate.level
    categories = sorted(gate.categories.values(), key=lambda c: (c.auto_approve_level, c.name))
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "server": server_info(),
        "requests": list(REQUEST_TYPES),
        "events": event_types(),
        "agent": {"approvalLevel": level, "approvalLevelName": gate.level_name,
                  "approvalRequired": level < 5},
        "approvalCategories": [{"name": c.name, "autoApproveLevel": c.auto_approve_level, "label": c.label,
                                "grantable": gate.is_grantable(c.name)} for c in categories],
        "tracing": server.tracing,
        "limits": {"maxLineBytes": server.limits.max_line_bytes, "maxPendingSteers": MAX_PENDING_STEERS,
                   "approvalTimeoutS": server.limits.approval_timeout_s},
    }


async def hello(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    wanted = request.get("protocolVersion")
    if wanted is not None and wanted != PROTOCOL_VERSION:
        raise ProtocolError("unsupported_protocol_version",
                            f"this sidecar speaks protocol version {PROTOCOL_VERSION}, the host asked for {wanted}; "
                            "install a matching atomic-agent or update the host")
    if "tracing" in request:
        server.set_tracing(bool(request["tracing"]))
    return {"protocolVersion": PROTOCOL_VERSION, "server": server_info(), "capabilities": capabilities(server)}


async def get_capabilities(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return capabilities(server)


async def shutdown(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    server.request_stop()
    return {"inFlightTurns": len(server.registry)}


LIFECYCLE_HANDLERS = {"hello": hello, "get_capabilities": get_capabilities, "shutdown": shutdown}
