"""The `tasks` plugin: durable tasks that run later, once per occurrence, across restarts.

It owns tasks.sqlite, or its tables in the fleet's PostgreSQL when the `shared_database`
service is there (storage.url) (the `tasks` service: store, runner), the scheduler tick the runtime
runs (`register_ticks`; `atomic-agent scheduler` is a host that runs only that and the
channels), the stale recovery when the service is first built, the agent's `tasks.*` tools (with the
`tasks_recurring` approval category) and `atomic-agent task ...`. Hookimpls only; the
modules are imported when used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

from .tasks_contract import TASKS_SERVICE

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import (
        ApprovalCategory,
        ConfigBlock,
        DoctorFinding,
        RuntimeView,
        ServiceSpec,
        TickSpec,
        ToolSpec,
    )

CONFIG_KEY = "tasks"
TICK_NAME = "tasks.scheduler"


def _config(runtime: RuntimeView) -> Any:
    return runtime.config.block(CONFIG_KEY)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .tasks_config import TasksConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=TasksConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .task_service import build_task_service

        service = build_task_service(runtime)
        if _config(runtime).enabled:
            # stale recovery, once per runtime, before anything uses the store (tick, tool,
            # command): a process that never touches tasks (`run`) pays nothing for them
            service.recover_stale()
        return service

    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_STATE_SERVICE

    from .task_shared_state import TasksState

    return [ServiceSpec(SHARED_STATE_SERVICE, lambda runtime: [TasksState()], multiple=True,
                        summary="what storage migrate copies of tasks.sqlite"),
            ServiceSpec(TASKS_SERVICE, build, close=lambda service: service.close(),
                        summary="durable tasks, their runs and the runner (tasks.sqlite, or the fleet's PostgreSQL)"),
            ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's Tasks panel: list, details, create, cancel, run now")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .tasks_panel import build_tasks_panel  # Textual loads here, only when the TUI runs

        return build_tasks_panel(context)

    return TuiPanel(name="tasks", title="Tasks", build=build, order=40)


@hookimpl
def register_approval_categories() -> Iterable[ApprovalCategory]:
    from atomic_agent.api import ApprovalCategory

    return [ApprovalCategory("tasks_recurring", 4, "recurring task")]


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    cfg = _config(runtime)
    if not (cfg.enabled and cfg.agent_tools_enabled):
        return []
    from .task_tools import task_tool_specs

    return task_tool_specs(runtime, cfg)


@hookimpl
def register_ticks(runtime: RuntimeView) -> Iterable[TickSpec]:
    cfg = _config(runtime)
    if not (cfg.enabled and cfg.scheduler_enabled):
        return []
    from atomic_agent.api import TickSpec

    async def tick() -> Any:
        return await runtime.service(TASKS_SERVICE).tick()

    return [TickSpec(TICK_NAME, cfg.scheduler_tick_ms / 1000, tick, summary="run due tasks")]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .task_commands import task_app

    app.add_typer(task_app, name="task", help="Durable tasks: create, list, show, logs, edit, pause, resume, cancel, delete, run, tick.")
    app.add_typer(task_app, name="tasks", hidden=True)  # the plural people type too
    from .scheduler_command import scheduler_command

    app.command("scheduler")(scheduler_command)


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from .doctor_findings import task_findings

    return task_findings(state_dir)


@hookimpl
def report_status(state_dir: Any, config: Any, plugin_host: Any) -> Iterable[Any]:
    from .task_overview import status_lines

    return status_lines(state_dir, config, plugin_host)
