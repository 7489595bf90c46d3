"""`atomic-agent tools list|show|call`: see the registered tools and their schemas, run one without a model."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.tools_cli.tools_commands import tools_app

    app.add_typer(tools_app, name="tools",
                  help="List the tools, show one's descriptor, or call one through the approval gate.")
