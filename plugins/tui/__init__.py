"""`atomic-agent tui`: the everyday terminal app (Textual), in-process with the runtime, or
attached to a running `serve` (`--attach`, over its HTTP API).

Textual is imported only when the command runs or a panel is built, so no other command
pays for it. The core tabs (Sessions, Tools, Privacy, Logs) are offered as `TuiPanel`
services exactly as any plugin offers its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, ServiceSpec


@hookimpl
def register_commands(app: Any) -> None:
    from atomic_agent.plugins.tui.tui_command import tui_command

    app.command("tui", help="The terminal app: chat with live steps, approvals, steering and a tab per part "
                            "of the runtime.")(tui_command)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock
    from atomic_agent.plugins.tui.tui_config import TUI_BLOCK, TuiConfig

    return [ConfigBlock(key=TUI_BLOCK, cls=TuiConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec
    from atomic_agent.plugins.tui.core_panels import CORE_PANELS

    # one service per plugin and name: the four core tabs travel as one sequence
    return [ServiceSpec(TUI_PANEL_SERVICE, factory=lambda _rt: CORE_PANELS, multiple=True,
                        summary="the TUI's core tabs: Sessions, Tools, Privacy, Logs")]
