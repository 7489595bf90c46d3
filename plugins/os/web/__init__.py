"""The web part of the `os` plugin: `os.web.fetch` and `os.web.search`. The `web` config
block lives here."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .fetch_tool import fetch_tool_spec
    from .search_tool import search_tool_spec

    return [fetch_tool_spec(runtime), search_tool_spec(runtime)]


def config_blocks() -> list[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .web_config import WEB_BLOCK, WebConfig

    return [ConfigBlock(key=WEB_BLOCK, cls=WebConfig)]
