"""`atomic-agent doctor`: check the state directory (config, databases, disk) and say what
to do about each problem. Runs even when config.json is broken, so it can report that."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .doctor_command import doctor_command

    app.command("doctor", help="Check config, databases and disk space; say how to fix what is wrong.")(doctor_command)
