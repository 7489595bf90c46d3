"""The desktop part of the `os` plugin: `os.notify` and `os.clipboard.read|write`, with a
clear "unavailable here" where there is no desktop session or helper binary."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .desktop_tools import desktop_tool_specs

    return desktop_tool_specs(runtime)
