"""Ask the approval gate through the tool context, with the extras the gate understands.

`command_shape` is what a session grant "allow all <binary>" covers; `binding` ties the
approval to the exact call (tool, canonical cwd, argv, hashes of the scripts that will
run), so an edit between the prompt and the run asks again. Contexts whose
`request_approval` takes only (category, summary) — older hosts, test kits — get the
two-argument call.
"""

from __future__ import annotations

import inspect
from typing import Any


def _accepts(func: Any, names: set[str]) -> bool:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return True
    return names <= {p.name for p in params}


async def ask_approval(ctx: Any, category: str, summary: str, command_shape: str | None = None,
                       binding: Any = None) -> bool:
    extra = {k: v for k, v in (("command_shape", command_shape), ("binding", binding)) if v is not None}
    if hasattr(ctx, "ask_approval"):
        return bool(await ctx.ask_approval(category, summary, **extra))
    if extra and not _accepts(ctx.request_approval, set(extra)):
        extra = {}
    return bool(await ctx.request_approval(category, summary, **extra))


def call_binding(tool: str, cwd: Any, argv: Any, files: Any = ()) -> Any:
    """An ApprovalBinding when this build has them, else None (the gate then binds nothing)."""
    try:
        from atomic_agent.api import approval_gate
    except (ImportError, AttributeError):
        return None
    return approval_gate.ApprovalBinding.capture(tool, cwd, list(argv), list(files))
