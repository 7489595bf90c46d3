"""`task_list`, `task_show`, `task_create`, `task_cancel`: the durable tasks of the running
host, through the tasks plugin's service ("tasks"), the same store the CLI and serve's
/api/tasks use. Without the tasks plugin (or with tasks off) these answer
`tasks_unavailable`; a bad field answers `invalid_request` naming it.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.tasks.tasks_contract import TASKS_SERVICE


def _tasks(server: Any) -> Any:
    service = server.runtime.service(TASKS_SERVICE, None)
    if service is None or not getattr(service.config, "enabled", False):
        raise ProtocolError("tasks_unavailable", "tasks are not available in this sidecar "
                            "(the tasks plugin is not loaded or tasks.enabled is false)")
    return service


def _task(service: Any, task_id: str) -> Any:
    try:
        return service.store.get(task_id)
    except KeyError:
        raise ProtocolError("task_not_found", f"no task {task_id!r}; task_list shows them") from None


async def task_list(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    tasks = _tasks(server).store.list(statuses=request.get("statuses") or (), session_id=request.get("sessionId"),
                                      limit=int(request.get("limit") or 100))
    return {"tasks": [task.as_json() for task in tasks]}


async def task_show(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    service = _tasks(server)
    task = _task(service, request["taskId"])
    return {"task": task.as_json(), "runs": [run.as_json() for run in service.store.runs(task.id, limit=20)]}


async def task_create(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    service = _tasks(server)
    try:
        task = service.create(request["message"], origin="sidecar", wake_source="user",
                              schedule=request.get("schedule"), session_id=request.get("sessionId"),
                              working_dir=server.working_dir, notify=request.get("notify"))
    except service.ValidationError as exc:
        raise ProtocolError("invalid_request", f"invalid {exc.field}: {exc.problem}") from None
    return {"task": task.as_json()}


async def task_cancel(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    service = _tasks(server)
    _task(service, request["taskId"])
    return {"task": service.cancel(request["taskId"]).as_json()}


TASK_HANDLERS = {"task_list": task_list, "task_show": task_show, "task_create": task_create,
                 "task_cancel": task_cancel}
