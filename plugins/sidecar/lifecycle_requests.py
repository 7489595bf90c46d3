"""`hello`, `get_capabilities` and `shutdown`: protocol version, what this sidecar can do, live state.

The approval level reported is the live gate's (a `--no-approval` boot or a level change
shows honestly), never the boot-time config snapshot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.sidecar.protocol_schema import PROTOCOL_VERSION, REQUEST_TYPES, event_types

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


def server_info() -> dict[str, str]:
    from atomic_agent import __version__

    return {"name": "atomic-agent", "version": __version__}


def skill_catalog(runtime: RuntimeView) -> list[dict[str, Any]]:
    """The enabled skills ({name, description, env, scripts}); empty without the skills plugin."""
    from atomic_agent.plugins.skills.skills_contract import SKILLS_SERVICE

    service = runtime.service(SKILLS_SERVICE, None)
    return list(service.catalog()) if service is not None else []


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
        "skills": skill_catalog(server.runtime),
        "limits": {"maxLineBytes": server.limits.max_line_bytes, "maxPendingSteers": MAX_PENDING_STEERS,
                   "approvalTimeoutS": server.limits.approval_timeout_s},
        "vision": _vision(server.runtime),
    }


def _vision(runtime: RuntimeView) -> dict[str, Any] | None:
    """The vision plugin's report (tool, caps, the provider's image capability); None without it."""
    from atomic_agent.plugins.vision.vision_contract import VISION_SERVICE

    service = runtime.service(VISION_SERVICE, None)
    return service.status() if service is not None else None


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
