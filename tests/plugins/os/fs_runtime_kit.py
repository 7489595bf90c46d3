"""A real Runtime with the os plugin on a fresh host and a ScriptedProvider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import atomic_agent.plugins.os as os_plugin
from atomic_agent.api import ScriptedProvider, boot_for_test, create_runtime


async def os_runtime(state: Path, script: list[Any], ask: Any = None, environ: dict[str, str] | None = None) -> Any:
    ctx = boot_for_test(state, plugins={"os": os_plugin}, environ=dict(environ or {}))
    return await create_runtime(boot_context=ctx, provider=ScriptedProvider(script), ask=ask)


def tool_results(runtime: Any, session_id: str) -> list[Any]:
    return [e for e in runtime.sessions.entries(session_id) if e.kind == "tool_result"]
