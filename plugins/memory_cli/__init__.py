"""`atomic-agent memory profile|notes|search|forget|export`: inspect and clean memory.sqlite."""

from __future__ import annotations

from typing import Any

from atomic_agent.api import hookimpl


@hookimpl
def register_commands(app: Any) -> None:
    from .memory_commands import memory_app

    app.add_typer(memory_app, name="memory", help="Inspect, search, export and clean memory (profile facts, notes).")
