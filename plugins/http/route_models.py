"""GET /v1/models: the one model this server answers as (the agent itself)."""

from __future__ import annotations

from typing import Any


async def list_models(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    model = {"id": ctx.settings.model_name, "object": "model", "created": ctx.started_at, "owned_by": "atomic-agent"}
    return JSONResponse({"object": "list", "data": [model]})
