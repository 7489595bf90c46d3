"""`memory_phases`, `memory_embeddings`, `memory_links`: read-only views of the host's memory
through the memory plugin's `memory_views` service (the data serve's /api/memory routes and
`atomic-agent memory phases|embeddings|links` show). Without the memory plugin they answer
`memory_unavailable`; an unknown note answers `note_not_found`.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_VIEWS_SERVICE
from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError


def _views(server: Any) -> Any:
    views = server.runtime.service(MEMORY_VIEWS_SERVICE, None)
    if views is None:
        raise ProtocolError("memory_unavailable", "memory views are not available in this sidecar "
                            "(the memory plugin is not loaded)")
    return views


async def memory_phases(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return {"phases": _views(server).phases()}


async def memory_embeddings(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return {"embeddings": _views(server).embeddings()}


async def memory_links(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    views = _views(server)
    note_id = int(request["noteId"])
    try:
        found = views.links(note_id)
    except views.memory.StoreError as exc:
        raise ProtocolError("memory_unavailable", f"memory.sqlite cannot be read: {exc}; "
                            "`atomic-agent doctor` explains") from None
    if found is None:
        raise ProtocolError("note_not_found", f"no note #{note_id}")
    return found


MEMORY_HANDLERS = {"memory_phases": memory_phases, "memory_embeddings": memory_embeddings,
                   "memory_links": memory_links}
