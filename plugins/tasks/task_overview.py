"""The tasks lines of `atomic-agent status`: tasks by status, the next ones due, the ones that
ended badly lately, and whether any host runs the scheduler now (a runner's lock under
`<state>/task-runners/` is held by a live process; on the fleet's PostgreSQL, a runner's
fleet lease). Read-only; a state dir without tasks.sqlite has no tasks (the file is not
created to say so)."""

from __future__ import annotations

import fcntl
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .task_database import tasks_db_path
from .task_service import RUNNERS_DIR

NEXT_SHOWN = 3
BAD_SHOWN = 3


def live_runners(state_dir: Path) -> int:
    """How many processes hold a task-runner lock now (each is a runtime that runs tasks)."""
    alive = 0
    for lock in sorted((state_dir / RUNNERS_DIR).glob("*.lock")):
        try:
            probe = open(lock, "r+")
        except OSError:
            continue
        with probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                alive += 1
                continue
            fcntl.flock(probe, fcntl.LOCK_UN)
    return alive


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).astimezone().isoformat(timespec="minutes")


def status_lines(state_dir: Path, config: Any, plugin_host: Any = None) -> list[dict[str, Any]]:
    from .task_database import TaskDatabase
    from .task_schedule import describe
    from .task_store import TaskStore

    block = config.block("tasks")
    if not block.enabled:
        return [{"section": "tasks", "name": "tasks", "state": "off", "summary": "switched off (tasks.enabled)"}]
    shared = _shared_database(state_dir, config, plugin_host)
    store: TaskStore | None = None
    if shared is not None:  # the fleet's tasks and runners, whichever host they run on
        from .fleet_runner_lease import live_runners as live_fleet_runners
        from .pg_task_database import pg_task_database
        from .pg_task_schema import SCHEMA_OWNER, STEPS

        where = " of the fleet"
        if shared.pending_steps(SCHEMA_OWNER, STEPS):  # no host has kept tasks there yet: nothing to apply for a look
            runners = 0
        else:
            store, runners = TaskStore(pg_task_database(shared)), live_fleet_runners(shared)
    else:
        if tasks_db_path(state_dir).exists():
            store = TaskStore(TaskDatabase.open(tasks_db_path(state_dir)))
        runners, where = live_runners(state_dir), ""
    counts: dict[str, int] = {}
    upcoming: list[Any] = []
    bad: list[Any] = []
    if store is not None:
        try:
            counts = {k: v for k, v in store.counts().items() if v}
            upcoming = store.list(statuses=["pending"], limit=1000)
            upcoming = sorted(upcoming, key=lambda t: t.due_at or 0)[:NEXT_SHOWN]
            bad = sorted(store.list(statuses=["failed", "blocked"], limit=1000),
                         key=lambda t: t.updated_at, reverse=True)[:BAD_SHOWN]
        finally:
            store.database.close()
    pending = counts.get("pending", 0)
    summary = ", ".join(f"{n} {status}" for status, n in counts.items()) or "no tasks"
    if upcoming:
        first = upcoming[0]
        summary += f"; next {_when(first.due_at)}: {first.message[:40]!r}"
    if runners:
        scheduler = {"state": "ok", "summary": f"running in {runners} process(es){where}"}
    elif not block.scheduler_enabled:
        scheduler = {"state": "off", "summary": "switched off (tasks.schedulerEnabled)"}
    else:
        scheduler = {"state": "warn" if pending else "off",
                     "summary": "no host runs it now: `atomic-agent scheduler` (or serve, sidecar, telegram run)"}
    problems = [f"task {t.id} {t.status} ({t.last_error_category or '?'}): {(t.last_error or '')[:120]} "
                f"— `atomic-agent task logs {t.id}`" for t in bad]
    return [{"section": "tasks", "name": "tasks", "state": "warn" if bad else "ok", "summary": summary,
             "problems": problems,
             "detail": {"counts": counts, "next": [{"id": t.id, "dueAt": t.due_at, "schedule": describe(t.schedule),
                                                    "message": t.message[:200]} for t in upcoming],
                        "lastBad": [t.as_json() for t in bad]}},
            {"section": "tasks", "name": "scheduler", **scheduler, "detail": {"liveRunners": runners}}]


def _shared_database(state_dir: Path, config: Any, plugin_host: Any) -> Any:
    """The fleet's PostgreSQL the tasks live in when storage.url names one, else None."""
    if plugin_host is None:
        return None
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    return plugin_host.command_service(state_dir, config, SHARED_DATABASE_SERVICE)
