"""`atomic-agent task list|show|logs|history|create|edit|pause|resume|cancel|delete|run|tick`.

Everything but `run` and `tick` opens the tasks (tasks.sqlite, or the fleet's PostgreSQL
when storage.url names one) and, for a recurring task, the sessions store directly and
exits fast; `run` and `tick` boot the full runtime, run
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
    """The tasks as the runtime keeps them: the fleet's PostgreSQL when storage.url names one
    (the `shared_database` service built from the boot context), else tasks.sqlite."""
    from atomic_agent.api import SessionStoreError
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    from .task_service import TaskService

    boot = current_cli_state(ctx).require()
    try:
        shared = boot.host.command_service(boot.state_dir, boot.config, SHARED_DATABASE_SERVICE)
    except SessionStoreError as exc:
        fail(str(exc))
    return TaskService(boot.state_dir, boot.config.block("tasks"), shared=shared)


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone().isoformat(timespec="seconds")


def _guard(fn: Any) -> Any:
    from .task_errors import TaskNotFoundError, TaskStateError, TaskStoreError, TaskValidationError

    try:
        return fn()
    except TaskValidationError as exc:
        fail(f"invalid {exc.field}: {exc.problem}")
    except (TaskNotFoundError, TaskStoreError, TaskStateError) as exc:
        fail(str(exc))


def _duration(start: int | None, end: int | None) -> str:
    if start is None or end is None:
        return "-"
    return f"{(end - start) / 1000:.1f}s"


def _tools_line(calls: list[dict[str, Any]] | None) -> str:
    """fs.read x2, shell (1 error): each tool once, in first-call order, with its count."""
    if calls is None:
        return "(not recorded)"
    if not calls:
        return "none"
    counts: dict[str, list[int]] = {}
    for call in calls:
        seen = counts.setdefault(str(call.get("tool")), [0, 0])
        seen[0] += 1
        seen[1] += call.get("status") not in ("ok", None)
    return ", ".join(f"{tool}{f' x{n}' if n > 1 else ''}{f' ({bad} failed)' if bad else ''}"
                     for tool, (n, bad) in counts.items())


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
    replied = [r for r in runs if r.reply]
    if replied:
        last = replied[-1]
        print(f"last reply ({_when(last.ended_at)}):")
        print(last.reply)
    _print_runs(runs)


@task_app.command("logs")
def task_logs(ctx: typer.Context, task_id: str, limit: int = typer.Option(20, "--limit", help="the last N runs"),
              json_out: bool = typer.Option(False, "--json")) -> None:
    """Each run of the task: status, timing, its tool calls summarised and its reply."""
    service = _service(ctx)
    _guard(lambda: service.store.get(task_id))
    runs = [r for r in service.store.runs(task_id, limit=limit)]
    if json_out:
        print_json([r.as_json() for r in runs])
        return
    if not runs:
        print(f"task {task_id} has not run yet")
        return
    for run in runs:
        if run.status == "skipped":
            print(f"== occurrence {_when(run.occurrence_at)}: skipped x{run.skipped_count} — {run.reason or ''}")
            continue
        print(f"== occurrence {_when(run.occurrence_at)} attempt {run.attempt}: {run.status}, started "
              f"{_when(run.started_at)}, took {_duration(run.started_at, run.ended_at)}, turn {run.turn_id or '-'}")
        print(f"tools: {_tools_line(run.tool_calls)}")
        if run.error:
            print(f"error ({run.category or 'unknown'}): {run.error}")
        print(run.reply if run.reply else "(no reply)")


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
            schedule = _interval(every, service.config)
        try:
            sessions = open_session_store(current_cli_state(ctx).require())  # the configured backend
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


def _interval(every_s: int, config: Any) -> dict[str, Any]:
    """--every in seconds, checked in seconds (the stored schedule counts milliseconds)."""
    from .task_errors import TaskValidationError

    if every_s < 1:
        raise TaskValidationError("every", f"{every_s} is not a positive number of seconds")
    minimum_s = config.min_interval_ms / 1000
    if every_s < minimum_s:
        raise TaskValidationError("every", f"{every_s} s is under the minimum interval of {minimum_s:g} s "
                                           "(tasks.minIntervalMs)")
    return {"kind": "interval", "everyMs": every_s * 1000}


@task_app.command("edit")
def task_edit(ctx: typer.Context, task_id: str,
              message: str = typer.Option(None, "--message", help="the new message"),
              at: str = typer.Option(None, "--at", help="ISO 8601 time or epoch ms"),
              cron: str = typer.Option(None, "--cron", help="5-field cron expression"),
              tz: str = typer.Option(None, "--tz", help="IANA time zone for --cron"),
              every: int = typer.Option(None, "--every", help="interval in seconds"),
              json_out: bool = typer.Option(False, "--json")) -> None:
    """Change a pending or paused task's message and/or schedule (--at, --cron [--tz], --every)."""
    from atomic_agent.api import SessionStoreError, open_session_store

    chosen = [name for name, value in (("--at", at), ("--cron", cron), ("--every", every)) if value is not None]
    if len(chosen) > 1:
        fail(f"give one schedule, not {' and '.join(chosen)}")
    if tz is not None and cron is None:
        fail("--tz only goes with --cron")
    if message is None and not chosen:
        fail("nothing to change: give --message and/or one of --at, --cron, --every")
    service = _service(ctx)

    def change() -> Any:
        schedule: dict[str, Any] | None = None
        if at is not None:
            schedule = {"kind": "at", "at": _parse_at(at)}
        elif cron is not None:
            schedule = {"kind": "cron", "expression": cron, "tz": tz}
        elif every is not None:
            schedule = _interval(every, service.config)
        try:
            sessions = open_session_store(current_cli_state(ctx).require()) if schedule is not None else None
        except SessionStoreError as exc:
            fail(str(exc))
        try:
            return service.edit(task_id, message=message, schedule=schedule, sessions=sessions)
        finally:
            if sessions is not None:
                sessions.close()

    task = _guard(change)
    if json_out:
        print_json(task.as_json())
    else:
        from .task_schedule import describe

        print(f"task {task.id} {task.status}, {describe(task.schedule)}, next run {_when(task.due_at)}")


@task_app.command("pause")
def task_pause(ctx: typer.Context, task_id: str) -> None:
    """Keep a pending task but stop it from running until `task resume` (safe to repeat)."""
    task = _guard(lambda: _service(ctx).pause(task_id))
    print(f"task {task.id} {task.status}")


@task_app.command("resume")
def task_resume(ctx: typer.Context, task_id: str) -> None:
    """Let a paused task run again; an occurrence missed meanwhile is caught up as after downtime."""
    task = _guard(lambda: _service(ctx).resume(task_id))
    print(f"task {task.id} {task.status}, next run {_when(task.due_at)}")


@task_app.command("delete")
def task_delete(ctx: typer.Context, task_id: str) -> None:
    """Remove a task with its run history (a running task must be cancelled first)."""
    task = _guard(lambda: _service(ctx).delete(task_id))
    print(f"task {task.id} deleted")


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
