"""The `sidecar` plugin: `atomic-agent sidecar`, an NDJSON protocol on stdin/stdout for desktop
hosts. The protocol is published as `protocol/sidecar-protocol.v1.schema.json`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.sidecar.sidecar_command import sidecar_command

    app.command("sidecar", help="Serve a desktop host over stdin/stdout (NDJSON protocol v1; logs on stderr).")(
        sidecar_command)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock
    from atomic_agent.plugins.sidecar.sidecar_config import SIDECAR_BLOCK, SidecarConfig

    return [ConfigBlock(key=SIDECAR_BLOCK, cls=SidecarConfig)]
