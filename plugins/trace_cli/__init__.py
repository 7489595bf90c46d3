"""The trace plugin: `atomic-agent trace list|show|export|replay` over `<state>/traces/`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .trace_commands import trace_app

    app.add_typer(trace_app, name="trace", help="List, show, export and replay per-session NDJSON traces.")
