"""The process part of the `os` plugin: `os.proc.list` and the gated `os.proc.kill`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .proc_tools import proc_tool_specs

    return proc_tool_specs(runtime)
