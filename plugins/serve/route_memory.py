"""/api/memory: read-only views of the agent's memory, through the memory plugin's
`memory_views` service (the same data `atomic-agent memory phases|embeddings|links` prints).

GET /api/memory/phases (which memory phases the loaded plugins declare, on or off, with their main
settings), GET /api/memory/embeddings (hybrid recall: switch, model, how many notes have a
vector), GET /api/memory/notes/{id}/links (the note and every link touching it). Every
route answers 404 `not_found` without the memory plugin, 404 `note_not_found` for an
unknown note and 503 `memory_unavailable` when memory.sqlite cannot be read. They pass
the same guard as every route (Host, Origin, bearer auth when `serve.apiKey` is set).
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_VIEWS_SERVICE
from atomic_agent.plugins.serve.error_envelope import ApiError


def _views(request: Any) -> Any:
    views = request.app.state.ctx.runtime.service(MEMORY_VIEWS_SERVICE, None)
    if views is None:
        raise ApiError(404, "memory views are not available on this server (the memory plugin is not loaded)",
                       code="not_found")
    return views


async def memory_phases(request: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"object": "list", "data": _views(request).phases()})


async def memory_embeddings(request: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"object": "memory.embeddings", **_views(request).embeddings()})


async def note_links(request: Any) -> Any:
    from starlette.responses import JSONResponse

    views = _views(request)
    raw = request.path_params["note_id"].lstrip("#")
    if not raw.isdigit() or not 0 < int(raw) < 2**63:
        raise ApiError(400, f"note id must be a positive integer, got {request.path_params['note_id']!r}",
                       code="invalid_value", extra={"param": "note_id"})
    try:
        found = views.links(int(raw))
    except views.memory.StoreError as exc:
        raise ApiError(503, f"memory.sqlite cannot be read: {exc}; `atomic-agent doctor` explains",
                       "server_error", "memory_unavailable") from None
    if found is None:
        raise ApiError(404, f"no note #{raw}", code="note_not_found")
    return JSONResponse({"object": "memory.note_links", **found})
