"""`atomic-agent task list|show|create|cancel|run|tick|history`.

Everything but `run` and `tick` opens tasks.sqlite (and, for a recurring task, the
sessions store) directly and exits fast; `run` and `tick` boot the full runtime, run
through `runtime.run_turn(origin="scheduler")` and close it on the way out.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

from .tasks_contract import TASKS_SERVICE

task_app = typer.Typer(no_args_is_help=True)


def _service(ctx: typer.Context) -> Any:
    from .task_service import TaskService

    boot = current_cli_state(ctx).require()
    return TaskService(boot.state_dir, boot.config.block("tasks"))


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone().isoformat(timespec="seconds")


def _guard(fn: Any) -> Any:
    from .task_errors import TaskNotFoundError, TaskStoreError, TaskValidationError

    try:
        return fn()
    except TaskValidationError as exc:
        fail(f"invalid {exc.field}: {exc.problem}")
    except (TaskNotFoundError, TaskStoreError) as exc:
        fail(str(exc))


@task_app.command("list")
def task_list(ctx: typer.Context, status: str = typer.Option("", "--status", help="comma-separated statuses"),
              session: str = typer.Option(None, "--session"), limit: int = typer.Option(100, "--limit"),
              json_out: bool = typer.Option(False, "--json")) -> None:
    """Tasks, oldest first, with schedule and next run."""
    from .task_schedule import describe

    statuses = [s for s in status.split(",") if s]
    tasks = _guard(lambda: _service(ctx).store.list(statuses=statuses, session_id=session, limit=limit))
    if json_out:
        print_json([t.as_json() for t in tasks])
        return
    print_table(["id", "status", "schedule", "next run", "attempts", "session", "message"],
                [[t.id, t.status, describe(t.schedule), _when(t.due_at) if t.status == "pending" else "-",
                  f"{t.attempts}/{t.max_attempts}", t.session_id or "(made at run)", t.message[:50]] for t in tasks])


@task_app.command("show")
def task_show(ctx: typer.Context, task_id: str, json_out: bool = typer.Option(False, "--json")) -> None:
    """One task, and its last runs."""
    service = _service(ctx)
    task = _guard(lambda: service.store.get(task_id))
    runs = service.store.runs(task_id, limit=20)
    if json_out:
        print_json({**task.as_json(), "runs": [r.as_json() for r in runs]})
        return
    for key, value in task.as_json().items():
        print(f"{key}: {value}")
    _print_runs(runs)


@task_app.command("history")
def task_history(ctx: typer.Context, task_id: str, limit: int = typer.Option(50, "--limit"),
                 json_out: bool = typer.Option(False, "--json")) -> None:
    """The run history: every occurrence run or skipped, with status and turn id."""
    service = _service(ctx)
    _guard(lambda: service.store.get(task_id))
    runs = service.store.runs(task_id, limit=limit)
    if json_out:
        print_json([r.as_json() for r in runs])
        return
    _print_runs(runs)


def _print_runs(runs: list[Any]) -> None:
    print_table(["occurrence", "attempt", "status", "started", "ended", "turn", "note"],
                [[_when(r.occurrence_at), r.attempt, r.status + (f" x{r.skipped_count}" if r.skipped_count > 1 else ""),
                  _when(r.started_at), _when(r.ended_at), r.turn_id or "-", (r.reason or r.error or "")[:60]]
                 for r in runs])


def _parse_at(raw: str) -> int:
    from .task_errors import TaskValidationError

    if raw.isdigit():
        return int(raw)
    try:
        when = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise TaskValidationError("at", f"{raw!r} is neither epoch milliseconds nor an ISO 8601 time") from exc
    if when.tzinfo is None:
        when = when.astimezone()  # the local time zone, as a person typing it means
    return int(when.timestamp() * 1000)


@task_app.command("create")
def task_create(ctx: typer.Context, message: str,
                at: str = typer.Option(None, "--at", help="ISO 8601 time or epoch ms"),
                in_minutes: int = typer.Option(None, "--in", help="minutes from now"),
                cron: str = typer.Option(None, "--cron", help="5-field cron expression"),
                tz: str = typer.Option(None, "--tz", help="IANA time zone for --cron"),
                every: int = typer.Option(None, "--every", help="interval in seconds"),
                session: str = typer.Option(None, "--session"),
                notify: str = typer.Option(None, "--notify", help="telegram"),
                json_out: bool = typer.Option(False, "--json")) -> None:
    """Create a task: now (no schedule), --at, --in, --cron [--tz] or --every."""
    from atomic_agent.api import SessionStoreError, open_session_store

    from .task_errors import TaskValidationError

    chosen = [name for name, value in (("--at", at), ("--in", in_minutes), ("--cron", cron), ("--every", every))
              if value is not None]
    if len(chosen) > 1:
        fail(f"give one schedule, not {' and '.join(chosen)}")
    if tz is not None and cron is None:
        fail("--tz only goes with --cron")
    service = _service(ctx)

    def make() -> Any:
        schedule: dict[str, Any] | None = None
        if at is not None:
            schedule = {"kind": "at", "at": _parse_at(at)}
        elif in_minutes is not None:
            if in_minutes < 1:
                raise TaskValidationError("in", "must be at least 1 minute")
            schedule = {"kind": "at", "at": service.clock() + in_minutes * 60_000}
        elif cron is not None:
            schedule = {"kind": "cron", "expression": cron, "tz": tz}
        elif every is not None:
            schedule = {"kind": "interval", "everyMs": every * 1000}
        try:
            sessions = open_session_store(service.state_dir)
        except SessionStoreError as exc:
            fail(str(exc))
        try:
            return service.create(message, origin="cli", wake_source="user", schedule=schedule, session_id=session,
                                  working_dir=Path.cwd(), notify=notify, sessions=sessions)
        finally:
            sessions.close()

    task = _guard(make)
    if json_out:
        print_json(task.as_json())
    else:
        print(f"task {task.id} {task.status}, next run {_when(task.due_at)}")


@task_app.command("cancel")
def task_cancel(ctx: typer.Context, task_id: str) -> None:
    """Cancel a task (a terminal one is left as it is; safe to repeat)."""
    task = _guard(lambda: _service(ctx).cancel(task_id))
    print(f"task {task.id} {task.status}")


async def _with_runtime(ctx: typer.Context, work: Any) -> Any:
    from atomic_agent.api import create_runtime

    runtime = await create_runtime(boot_context=current_cli_state(ctx).require())
    try:
        await runtime.recover(resume=False)
        return await work(runtime.service(TASKS_SERVICE))
    finally:
        await runtime.close()


def _require_enabled(ctx: typer.Context) -> None:
    if not current_cli_state(ctx).require().config.block("tasks").enabled:
        fail("tasks are switched off (tasks.enabled = false)")


@task_app.command("run")
def task_run(ctx: typer.Context, task_id: str) -> None:
    """Run one pending task now (boots the runtime)."""
    import asyncio

    _require_enabled(ctx)
    _guard(lambda: _service(ctx).store.get(task_id))
    async def work(service: Any) -> Any:
        report = await service.runner.run_now(task_id)
        await service.reports.deliver_pending()
        return report

    report = asyncio.run(_with_runtime(ctx, work))
    for ran, outcome in report.outcomes:
        print(f"task {ran}: {outcome}")
    if not report.outcomes:
        print(f"task {task_id} was not pending; nothing ran")


@task_app.command("tick")
def task_tick(ctx: typer.Context) -> None:
    """One scheduler pass over everything due now, unbounded (boots the runtime)."""
    import asyncio

    _require_enabled(ctx)
    async def work(service: Any) -> Any:
        report = await service.runner.run_due()
        await service.reports.deliver_pending()
        return report

    report = asyncio.run(_with_runtime(ctx, work))
    print(f"claimed {report.claimed}, skipped-only {report.skipped_only}")
    for ran, outcome in report.outcomes:
        print(f"task {ran}: {outcome}")
