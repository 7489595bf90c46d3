"""Chat commands: `run` (one turn), `repl` (multi-turn), `prompt show` (the next prompt)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.chat_cli.prompt_command import prompt_app
    from atomic_agent.plugins.chat_cli.repl_command import repl_command
    from atomic_agent.plugins.chat_cli.run_command import run_command

    app.command("run", help="Run one turn: send MESSAGE, stream progress to stderr, print the reply.")(run_command)
    app.command("repl", help="Chat turn after turn until `finish` or end of input.")(repl_command)
    app.add_typer(prompt_app, name="prompt", help="Inspect the prompt the next step would send.")
