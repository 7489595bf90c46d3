"""The process part of the `os` plugin: `os.proc.list` and the gated `os.proc.kill`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


def tool_specs(runtime: RuntimeView) -> list[Any]:
    from .proc_tools import proc_tool_specs

    return proc_tool_specs(runtime)
