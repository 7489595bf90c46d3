"""/api/tasks: the durable tasks of the `tasks` plugin over HTTP.

GET /api/tasks (?status=a,b&session=ID&limit=N), POST /api/tasks ({message, sessionId?,
schedule?: {kind: at|cron|interval, ...}}), GET /api/tasks/{id} (with its last runs),
DELETE /api/tasks/{id} (cancel: idempotent, a terminal task comes back unchanged),
POST /api/tasks/{id}/run (202: runs now, in the background), GET /api/tasks/{id}/history.
Every route answers 404 when no plugin provides the `tasks` service or tasks are off.
"""

from __future__ import annotations

import asyncio
from typing import Any

from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.request_body import json_body
from atomic_agent.plugins.tasks.tasks_contract import TASKS_SERVICE

_background: set[asyncio.Task[Any]] = set()


def _tasks(request: Any) -> Any:
    runtime = request.app.state.ctx.runtime
    service = runtime.service(TASKS_SERVICE, None)
    if service is None or not getattr(service.config, "enabled", False):
        raise ApiError(404, "tasks are not available on this server (the tasks plugin is off)", code="not_found")
    return service


def _task_or_404(service: Any, task_id: str) -> Any:
    try:
        return service.store.get(task_id)
    except KeyError:
        raise ApiError(404, f"no task {task_id!r}; GET /api/tasks lists them", code="task_not_found") from None


def _invalid(exc: Any) -> ApiError:
    return ApiError(400, f"invalid {exc.field}: {exc.problem}", code="invalid_value", extra={"param": exc.field})


async def list_tasks(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    raw = request.query_params.get("limit", "100")
    if not raw.isdigit() or not 1 <= int(raw) <= 1000:
        raise ApiError(400, f"limit must be an integer 1..1000, got {raw!r}", code="invalid_value")
    statuses = [s for s in request.query_params.get("status", "").split(",") if s]
    tasks = service.store.list(statuses=statuses, session_id=request.query_params.get("session"), limit=int(raw))
    return JSONResponse({"object": "list", "data": [t.as_json() for t in tasks]})


async def create_task(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    body = await json_body(request, request.app.state.ctx.settings.max_body_bytes)
    schedule = body.get("schedule")
    if schedule is not None and not isinstance(schedule, dict):
        raise ApiError(400, "schedule must be an object {kind: at|cron|interval, ...}", code="invalid_value",
                       extra={"param": "schedule"})
    session_id = body.get("sessionId")
    if session_id is not None and not isinstance(session_id, str):
        raise ApiError(400, "sessionId must be a string", code="invalid_value", extra={"param": "sessionId"})
    try:
        task = service.create(body.get("message"), origin="http", wake_source="user", schedule=schedule,
                              session_id=session_id, working_dir=request.app.state.ctx.settings.working_dir)
    except service.ValidationError as exc:
        raise _invalid(exc) from None
    return JSONResponse(task.as_json(), status_code=201)


async def get_task(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    task = _task_or_404(service, request.path_params["task_id"])
    return JSONResponse({**task.as_json(), "runs": [r.as_json() for r in service.store.runs(task.id, limit=20)]})


async def task_history(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    task = _task_or_404(service, request.path_params["task_id"])
    return JSONResponse({"object": "list", "data": [r.as_json() for r in service.store.runs(task.id)]})


async def cancel_task(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    _task_or_404(service, request.path_params["task_id"])
    return JSONResponse(service.cancel(request.path_params["task_id"]).as_json())


async def run_task(request: Any) -> Any:
    from starlette.responses import JSONResponse

    service = _tasks(request)
    task = _task_or_404(service, request.path_params["task_id"])
    if task.status != "pending":
        raise ApiError(409, f"task {task.id} is {task.status}; only a pending task can be run", code="task_not_pending")
    job = asyncio.ensure_future(service.runner.run_now(task.id))
    _background.add(job)
    job.add_done_callback(_background.discard)
    return JSONResponse({"id": task.id, "object": "task.run", "accepted": True}, status_code=202)
