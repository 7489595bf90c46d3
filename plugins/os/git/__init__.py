"""The git part of the `os` plugin: read-only `os.git.*` tools with structured output."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .git_tools import git_tool_specs

    return git_tool_specs(runtime)
