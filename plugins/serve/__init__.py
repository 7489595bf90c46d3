"""The `serve` plugin: `atomic-agent serve`, an OpenAI-compatible HTTP API plus atomic admin
routes (sessions, steering, events, approvals, MCP servers), every chat request one
`runtime.run_turn`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.serve.serve_command import serve_command

    app.command("serve", help="Serve the agent over an OpenAI-compatible HTTP API (loopback by default).")(
        serve_command)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock
    from atomic_agent.plugins.serve.serve_config import SERVE_BLOCK, ServeConfig
    from atomic_agent.plugins.serve.webhook_config import WEBHOOKS_BLOCK, WebhooksConfig

    return [ConfigBlock(key=SERVE_BLOCK, cls=ServeConfig), ConfigBlock(key=WEBHOOKS_BLOCK, cls=WebhooksConfig)]
