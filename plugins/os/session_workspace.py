"""Where a session's os tools work: the `sandbox` service may move them into the session's
git worktree (`sandbox.worktree`). Without that service, or with worktree mode off, the
context is returned unchanged."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import ToolResult

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


async def session_context(runtime: RuntimeView, ctx: Any, tool: str) -> Any:
    """`ctx` with its working dir moved to the session's worktree, or a ToolResult error
    when worktree mode cannot start (the call then does not run)."""
    from atomic_agent.plugins.sandbox.sandbox_contract import SANDBOX_SERVICE

    sandbox = runtime.service(SANDBOX_SERVICE, None)
    if sandbox is None or not sandbox.worktree or not hasattr(ctx, "working_dir"):
        return ctx
    try:
        placed = await asyncio.to_thread(sandbox.working_dir, ctx.session_id, ctx.working_dir)
    except ValueError as exc:
        return ToolResult.error(f"{tool}: {exc}", worktree=False)
    if placed == ctx.working_dir:
        return ctx
    return attrs.evolve(ctx, working_dir=placed)
