"""What a running tool receives besides its args."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs


@attrs.define
class ToolContext:
    """Per-call context: the session, where it works, and how to stop.

    `cancelled` is set when the turn is cancelled; long-running tools poll or await it.
    `request_approval` asks the approval gate (category, summary) and returns True when
    the call may proceed.
    """

    session_id: str
    working_dir: Path
    state_dir: Path
    cancelled: asyncio.Event
    request_approval: Callable[[str, str], Awaitable[bool]]
    services: dict[str, Any] = attrs.field(factory=dict)
