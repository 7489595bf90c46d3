"""The agent's own scheduling tools: tasks.schedule | cron | list | show | cancel.

Bad input never escapes as an exception: each tool answers a structured error (`field`,
`problem`) the model can fix and call again. Creating recurring work asks the approval
gate under `tasks_recurring`; a session holds at most `tasks.maxActivePerSession` pending
or running tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .tasks_contract import TASKS_SERVICE

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec

RECURRING_CATEGORY = "tasks_recurring"
LIST_LIMIT_CAP = 200
_MESSAGE = {"type": "string", "description": "what the agent is asked to do when the task fires"}
_NOTIFY = {"type": "string", "enum": ["telegram"], "description": "report the outcome there when it ends"}
SCHEDULE_SCHEMA = {
    "type": "object",
    "properties": {
        "message": _MESSAGE,
        "at": {"type": "string", "description": "ISO 8601 time with offset, e.g. 2026-12-04T18:00:00+01:00"},
        "inMinutes": {"type": "integer", "minimum": 1, "maximum": 525600},
        "newSession": {"type": "boolean", "description": "run in a fresh session instead of this one"},
        "notify": _NOTIFY,
    },
    "required": ["message"],
    "additionalProperties": False,
}
CRON_SCHEMA = {
    "type": "object",
    "properties": {
        "message": _MESSAGE,
        "expression": {"type": "string", "description": "5-field cron, e.g. '0 9 * * 1-5'"},
        "tz": {"type": "string", "description": "IANA time zone, e.g. Europe/Berlin (default UTC)"},
        "notify": _NOTIFY,
    },
    "required": ["message", "expression"],
    "additionalProperties": False,
}
LIST_SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "description": "comma-separated statuses, e.g. pending,running"},
        "limit": {"type": "integer", "minimum": 1, "maximum": LIST_LIMIT_CAP},
        "all": {"type": "boolean", "description": "every session's tasks, not only this one's"},
    },
    "additionalProperties": False,
}
ID_SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"],
             "additionalProperties": False}


def _line(task: Any) -> str:
    from .task_schedule import describe

    due = datetime.fromtimestamp(task.due_at / 1000).astimezone().isoformat(timespec="minutes") \
        if task.due_at else "-"
    return f"{task.id} {task.status} {describe(task.schedule)} next {due}: {task.message[:80]}"


def task_tool_specs(runtime: RuntimeView, cfg: Any) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

    from .task_errors import TaskNotFoundError, TaskStoreError, TaskValidationError

    def service() -> Any:
        return runtime.service(TASKS_SERVICE)

    def invalid(exc: TaskValidationError) -> Any:
        return ToolResult.error(f"invalid {exc.field}: {exc.problem}", field=exc.field, problem=exc.problem)

    def over_limit(session_id: str) -> Any:
        active = service().store.count_active_for_session(session_id)
        if active >= cfg.max_active_per_session:
            return ToolResult.error(f"this session already has {active} active tasks (limit "
                                    f"{cfg.max_active_per_session}); cancel one first",
                                    field="limit", problem="too many active tasks")
        return None

    async def created(verb: str, make: Any) -> Any:
        """Await `make()` (the new task, or a refusal result); a validation or store error
        becomes an error result the model can act on."""
        try:
            outcome = await make()
        except TaskValidationError as exc:
            return invalid(exc)
        except TaskStoreError as exc:
            return ToolResult.error(str(exc))
        if isinstance(outcome, ToolResult):
            return outcome
        return ToolResult.ok(f"{verb} {outcome.id}: {_line(outcome)}", task=outcome.as_json())

    async def schedule(args: Mapping[str, Any], ctx: Any) -> Any:
        async def make() -> Any:
            svc = service()
            if ("at" in args) == ("inMinutes" in args):
                raise TaskValidationError("at", "give exactly one of `at` (ISO 8601 time) or `inMinutes`")
            if "at" in args:
                try:
                    when = datetime.fromisoformat(str(args["at"]))
                except ValueError as exc:
                    raise TaskValidationError("at", f"{args['at']!r} is not an ISO 8601 time") from exc
                if when.tzinfo is None:
                    raise TaskValidationError("at", "needs a UTC offset, e.g. 2026-12-04T18:00:00+01:00")
                at_ms = int(when.timestamp() * 1000)
            else:
                at_ms = svc.clock() + int(args["inMinutes"]) * 60_000
            if (limited := over_limit(ctx.session_id)) is not None:
                return limited
            return svc.create(str(args["message"]), origin="agent", wake_source="agent",
                              schedule={"kind": "at", "at": at_ms}, session_id=ctx.session_id,
                              new_session=bool(args.get("newSession")), created_by_session=ctx.session_id,
                              working_dir=Path(ctx.working_dir), notify=args.get("notify"))

        return await created("scheduled task", make)

    async def cron(args: Mapping[str, Any], ctx: Any) -> Any:
        async def make() -> Any:
            svc = service()
            spec = {"kind": "cron", "expression": str(args["expression"]), "tz": args.get("tz")}
            from .task_schedule import parse_schedule

            parse_schedule(spec, now_ms=svc.clock(), min_interval_ms=cfg.min_interval_ms)  # validate before asking
            if (limited := over_limit(ctx.session_id)) is not None:
                return limited
            summary = f"recurring task {spec['expression']} ({spec['tz'] or 'UTC'}): {str(args['message'])[:120]}"
            if not await ctx.ask_approval(RECURRING_CATEGORY, summary):
                return ToolResult.error("the user declined the recurring task", field="approval", problem="denied")
            return svc.create(str(args["message"]), origin="agent", wake_source="agent", schedule=spec,
                              created_by_session=ctx.session_id, working_dir=Path(ctx.working_dir),
                              notify=args.get("notify"))

        return await created("created recurring task", make)

    async def list_tasks(args: Mapping[str, Any], ctx: Any) -> Any:
        from .task_records import STATUSES

        statuses = [s.strip() for s in str(args.get("status") or "").split(",") if s.strip()]
        unknown = [s for s in statuses if s not in STATUSES]
        if unknown:
            return ToolResult.error(f"unknown status {', '.join(unknown)}; use {', '.join(STATUSES)}",
                                    field="status", problem="unknown status")
        limit = min(int(args.get("limit") or 20), LIST_LIMIT_CAP)
        try:
            tasks = service().store.list(statuses=statuses, limit=limit,
                                         session_id=None if args.get("all") else ctx.session_id)
        except TaskStoreError as exc:
            return ToolResult.error(str(exc))
        if not tasks:
            return ToolResult.ok("no tasks", tasks=[])
        return ToolResult.ok("\n".join(_line(t) for t in tasks), tasks=[t.as_json() for t in tasks])

    async def show(args: Mapping[str, Any], ctx: Any) -> Any:
        try:
            task = service().store.get(str(args["id"]))
            runs = service().store.runs(task.id, limit=5)
        except TaskNotFoundError as exc:
            return ToolResult.error(str(exc), field="id", problem="no such task")
        except TaskStoreError as exc:
            return ToolResult.error(str(exc))
        history = "; ".join(f"{r.status}@{r.occurrence_at}" for r in runs) or "never ran"
        error = f" last error: {task.last_error}" if task.last_error else ""
        return ToolResult.ok(f"{_line(task)} (attempts {task.attempts}/{task.max_attempts}; runs: {history}){error}",
                             task=task.as_json(), runs=[r.as_json() for r in runs])

    async def cancel(args: Mapping[str, Any], ctx: Any) -> Any:
        try:
            task = service().cancel(str(args["id"]))
        except TaskNotFoundError as exc:
            return ToolResult.error(str(exc), field="id", problem="no such task")
        except TaskStoreError as exc:
            return ToolResult.error(str(exc))
        return ToolResult.ok(f"task {task.id} is {task.status}", task=task.as_json())

    return [
        ToolSpec("tasks.schedule", "Schedule a one-shot task: a message the agent runs later (at a time or in N "
                 "minutes).", SCHEDULE_SCHEMA, ResourceClass.TASKS_WRITE, schedule, tier=Tier.RARE,
                 example='{"tool": "tasks.schedule", "args": {"message": "check the build", "inMinutes": 30}}'),
        ToolSpec("tasks.cron", "Create a recurring task on a cron schedule (asks the user).", CRON_SCHEMA,
                 ResourceClass.APPROVAL_GATED, cron, tier=Tier.RARE, approval_category=RECURRING_CATEGORY),
        ToolSpec("tasks.list", "List scheduled tasks of this session.", LIST_SCHEMA, ResourceClass.PURE_READ,
                 list_tasks, tier=Tier.RARE, durable=True),
        ToolSpec("tasks.show", "Show one task and its recent runs.", ID_SCHEMA, ResourceClass.PURE_READ, show,
                 tier=Tier.RARE, durable=True),
        ToolSpec("tasks.cancel", "Cancel a task (safe to repeat).", ID_SCHEMA, ResourceClass.TASKS_WRITE, cancel,
                 tier=Tier.RARE, durable=True),
    ]
