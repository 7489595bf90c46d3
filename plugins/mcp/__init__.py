"""The MCP client: tools, resources and prompts of external MCP servers in the agent loop.

atomic-agent consumes MCP servers and never serves MCP itself. The `mcp` SDK is imported
by `sdk_connection` only; everything else works on this plugin's records. The manager is
provided as the service "mcp" (for hosts: sidecar, serve) and
connects the configured servers before the first prompt; their tools are the registry's
live group `mcp`, so adding or removing a server while the runtime runs rebuilds the
next step's prompt and grammar.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

from .mcp_contract import MCP_SERVICE

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, RuntimeView, ServiceSpec

SERVICE = MCP_SERVICE


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .server_config import MCP_BLOCK, McpConfig

    return [ConfigBlock(key=MCP_BLOCK, cls=McpConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import TUI_PANEL_SERVICE, ServiceSpec
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_STATE_SERVICE

    from .drift_shared_state import DriftState

    return [ServiceSpec(SHARED_STATE_SERVICE, lambda runtime: [DriftState()], multiple=True,
                        summary="what storage migrate copies of the MCP drift approvals"),
            ServiceSpec(SERVICE, _build_manager, close=lambda manager: manager.close(),
                        summary="the MCP servers this runtime is connected to (add, remove, call)"),
            ServiceSpec(TUI_PANEL_SERVICE, _tui_panel, multiple=True,
                        summary="the TUI's MCP panel: servers, add by pasted JSON, remove, drift approval")]


def _tui_panel(runtime: RuntimeView) -> Any:
    from atomic_agent.api import TuiPanel

    def build(context: Any) -> Any:
        from .mcp_panel import build_mcp_panel  # Textual loads here, only when the TUI runs

        return build_mcp_panel(context)

    return TuiPanel(name="mcp", title="MCP", build=build, order=60)


@hookimpl
def runtime_started(runtime: RuntimeView) -> Awaitable[None] | None:
    from .server_config import mcp_config

    servers = mcp_config(runtime).servers
    if not servers:
        return None  # no servers: nothing to connect, no tools, prompt unchanged
    return runtime.service(SERVICE).start(servers)


def _build_manager(runtime: RuntimeView) -> Any:
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    from .sampling_forwarder import SamplingForwarder
    from .server_config import mcp_config
    from .server_manager import McpManager

    cfg = mcp_config(runtime)
    return McpManager(registry=runtime.service("tool_registry"), state_dir=runtime.state_dir,
                      environ=getattr(runtime, "environ", None),
                      sampling=SamplingForwarder(runtime, cfg.sampling) if cfg.sampling.enabled else None,
                      max_result_chars=cfg.max_result_chars, persistence=_persistence(runtime),
                      sensitive=runtime.service("sensitive_reads", None),
                      shared_database=runtime.service(SHARED_DATABASE_SERVICE, None))


def _persistence(runtime: RuntimeView) -> Any:
    from .config_persistence import ConfigPersistence

    blocks = getattr(runtime, "config_blocks", None)
    path = getattr(runtime.config, "path", None)
    if blocks is None or path is None:
        return None
    return ConfigPersistence(path, blocks)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .mcp_commands import mcp_app

    app.add_typer(mcp_app, name="mcp", help="MCP servers: list, tools, resources, prompts, add, remove, enable, disable, diff and approve drifted tools, call a tool.")


@hookimpl
def report_doctor_findings(state_dir: Path, plugin_host: Any, config: Any) -> Iterable[DoctorFinding]:
    from .doctor_findings import mcp_findings

    return mcp_findings(state_dir, plugin_host, config)


@hookimpl
def report_status(state_dir: Path, config: Any, plugin_host: Any) -> Iterable[Any]:
    from .mcp_status import status_lines

    return status_lines(state_dir, config, plugin_host)
