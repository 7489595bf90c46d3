"""The Telegram channel: the agent as a remote control from the owner's phone.

Long polling of the Bot API (the plugin's one periodic loop), every message a turn of the
channel's own session (or a steer of the running one), approvals of that session on
inline buttons, replies as durable delivery records (never lost, never sent twice), one
polling runtime per state dir (`telegram.lock`). The token lives only in `<state>/.env`.
The channel object is the service "telegram" (live control for hosts: sidecar, serve) and
the registered channel; httpx is used by `bot_api` only.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl
from atomic_agent.plugins.tasks.tasks_contract import REPORT_SINK

from .telegram_contract import TELEGRAM_SERVICE

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ChannelSpec, ConfigBlock, DoctorFinding, RuntimeView, ServiceSpec

SERVICE = TELEGRAM_SERVICE


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .telegram_config import TELEGRAM_BLOCK, TelegramConfig

    return [ConfigBlock(key=TELEGRAM_BLOCK, cls=TelegramConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_STATE_SERVICE

    from .delivery_shared_state import TelegramState

    return [ServiceSpec(SHARED_STATE_SERVICE, lambda runtime: [TelegramState()], multiple=True,
                        summary="what storage migrate copies of telegram.sqlite"),
            ServiceSpec(SERVICE, _build_channel, close=lambda channel: channel.close(),
                        summary="the Telegram channel: status and live control (enable, token, owner, pairing)"),
            # the tasks plugin's `notify: telegram` reports go to the owner through the channel
            ServiceSpec(REPORT_SINK, lambda runtime: runtime.service(SERVICE), multiple=True,
                        summary="task reports (notify) to the paired Telegram owner"),
            ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's Telegram panel: status, enable, token, pairing, owner")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .telegram_panel import build_telegram_panel  # Textual loads here, only when the TUI runs

        return build_telegram_panel(context)

    return TuiPanel(name="telegram", title="Telegram", build=build, order=70)


def _build_channel(runtime: RuntimeView) -> Any:
    from .telegram_channel import TelegramChannel

    return TelegramChannel(runtime)


@hookimpl
def register_channels(runtime: RuntimeView) -> Iterable[ChannelSpec]:
    from atomic_agent.api import ChannelSpec

    # always registered: start() polls only when telegram.enabled, so live control can turn
    # it on without restarting the host
    return [ChannelSpec(SERVICE, lambda rt: rt.service(SERVICE), summary="Telegram remote control (long polling)")]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .telegram_commands import telegram_app

    app.add_typer(telegram_app, name="telegram",
                  help="Telegram remote control: status, enable/disable, token, owner, pairing, run.")


@hookimpl
def report_doctor_findings(state_dir: Path, plugin_host: Any, config: Any) -> Iterable[DoctorFinding]:
    from .doctor_findings import telegram_findings

    return telegram_findings(state_dir, plugin_host, config)


@hookimpl
def report_status(state_dir: Path, config: Any, plugin_host: Any) -> Iterable[Any]:
    from .telegram_commands import status_lines

    return status_lines(state_dir, config, plugin_host)
