"""The `memory` plugin owns memory.sqlite: its schema, the profile and note stores, the
`memory` service the memory phases use (profile, notes, reflection), the read-only
`memory_views` service the hosts publish (serve, sidecar), and the
`atomic-agent memory profile|notes|search|forget|export|links|phases` commands and its
`doctor` findings.

Hookimpls only; the stores are imported when the service or a command is first used.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

from .memory_contract import MEMORY_SERVICE, MEMORY_VIEWS_SERVICE

if TYPE_CHECKING:
    from .memory_contract import Memory

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import DoctorFinding, RuntimeView, ServiceSpec


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec

    def build(runtime: RuntimeView) -> Memory:  # mypy checks the service against its contract
        from .memory_service import build_memory_service

        return build_memory_service(runtime)

    def build_views(runtime: RuntimeView) -> Any:
        from .memory_views import MemoryViews

        return MemoryViews(runtime)

    return [ServiceSpec(MEMORY_SERVICE, build, close=lambda service: service.close(),
                        summary="memory.sqlite and its profile and note stores"),
            ServiceSpec(MEMORY_VIEWS_SERVICE, build_views,
                        summary="read-only memory views for hosts: phase switches, embedding coverage, a note's links"),
            ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's Memory panel (read-only): profile with history, notes, links, phases")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .memory_panel import build_memory_panel  # Textual loads here, only when the TUI runs

        return build_memory_panel(context)

    return TuiPanel(name="memory", title="Memory", build=build, order=50)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .memory_commands import memory_app

    app.add_typer(memory_app, name="memory",
                  help="Inspect, search, export and clean memory (profile facts, notes, links; phase switches).")


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from .doctor_findings import memory_findings

    return memory_findings(state_dir)
