"""What a running tool receives besides its args."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs


@attrs.define
class ToolContext:
    """Per-call context: the session, where it works, and how to stop.

    `cancelled` is set when the turn is cancelled; long-running tools poll or await it.
    `request_approval(category, summary)` asks the approval gate and returns True when the
    call may proceed. The runtime's implementation also takes the keyword arguments
    `binding=` (an ApprovalBinding: the approval then holds only for that exact call) and
    `command_shape=` (the normalised binary a shell command runs, offered as a `[a]`
    grant); `ask_approval` passes them only to callables that accept them.
    """

    session_id: str
    working_dir: Path
    state_dir: Path
    cancelled: asyncio.Event
    request_approval: Callable[..., Awaitable[bool]]
    services: dict[str, Any] = attrs.field(factory=dict)

    async def ask_approval(self, category: str, summary: str, *, binding: Any = None,
                           command_shape: str | None = None) -> bool:
        extra = {k: v for k, v in (("binding", binding), ("command_shape", command_shape)) if v is not None}
        if extra and not _accepts(self.request_approval, extra):
            extra = {}
        return bool(await self.request_approval(category, summary, **extra))


def _accepts(fn: Callable[..., Any], names: dict[str, Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return True
    return set(names) <= {p.name for p in params}
