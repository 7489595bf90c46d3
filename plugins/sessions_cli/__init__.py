"""`atomic-agent sessions list|show|compact|delete|export`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.sessions_cli.sessions_commands import sessions_app

    app.add_typer(sessions_app, name="sessions", help="List, show, compact, export and delete chat sessions.")
