"""The `serve` plugin: `atomic-agent serve`, an OpenAI-compatible HTTP API plus atomic admin
routes (sessions, steering, events, approvals, MCP servers), every chat request one
`runtime.run_turn`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, ServiceSpec


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.serve.serve_command import serve_command

    app.command("serve", help="Serve the agent over an OpenAI-compatible HTTP API (loopback by default).")(
        serve_command)
    from atomic_agent.plugins.serve.webhook_commands import webhook_app

    app.add_typer(webhook_app, name="webhook", help="Webhook endpoints of serve: list, add, remove, test.")


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from atomic_agent.plugins.serve.webhook_findings import webhook_findings

    return webhook_findings(state_dir)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock
    from atomic_agent.plugins.serve.serve_config import SERVE_BLOCK, ServeConfig
    from atomic_agent.plugins.serve.webhook_config import WEBHOOKS_BLOCK, WebhooksConfig

    return [ConfigBlock(key=SERVE_BLOCK, cls=ServeConfig), ConfigBlock(key=WEBHOOKS_BLOCK, cls=WebhooksConfig)]


@hookimpl
def report_status(state_dir: Path, config: Any) -> Iterable[dict[str, Any]]:
    from atomic_agent.plugins.serve.local_serve import status_lines

    return status_lines(state_dir, config)


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_STATE_SERVICE
    from atomic_agent.plugins.serve.webhook_shared_state import WebhookState

    return [ServiceSpec(SHARED_STATE_SERVICE, lambda runtime: [WebhookState()], multiple=True,
                        summary="what storage migrate copies of serve/webhooks.sqlite")]
