"""`atomic-agent sessions list|show|search|open|compact|delete|export`, and the agent's
read-only `sessions.search` / `sessions.open` tools over the user's own past sessions."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock, RuntimeView, ToolSpec

CONFIG_KEY = "sessionSearch"


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from atomic_agent.plugins.sessions_cli.sessions_commands import sessions_app

    app.add_typer(sessions_app, name="sessions",
                  help="List, show, search, open, compact, export and delete chat sessions.")


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .session_search_config import SessionSearchConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=SessionSearchConfig)]


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    cfg = runtime.config.block(CONFIG_KEY)
    if not cfg.enabled:
        return []
    from .session_search_tools import session_search_tool_specs

    return session_search_tool_specs(runtime, cfg.also_readable)
