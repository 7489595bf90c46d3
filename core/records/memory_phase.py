"""What a memory plugin registers: one phase of the memory fabric."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs


@attrs.frozen
class PromptSection:
    """A `### <heading>` section of the prompt's variable tail.

    `slot` places it in mutability order: "memory" sections come before session-facts
    (profile, memory-index), "recall" sections after it (recalled notes).
    """

    heading: str
    body: str
    slot: str = "memory"  # "memory" | "recall"


@attrs.frozen
class TurnDigest:
    """What the hot path sees after a turn: the session, the user text and the reply."""

    session_id: str
    turn_index: int
    user_text: str
    reply_text: str
    tool_summaries: Sequence[str] = ()


@attrs.frozen
class MemoryPhase:
    """A memory phase. Every callable is optional; a missing one is skipped.

    - `sections(session_id, user_text)` — read path: tail sections for the next step.
    - `after_turn(digest)` — hot path, awaited off the turn's critical path.
    - `consolidate()` — cold path, called on the consolidation tick.
    Phases run in (`order`, `name`) order.
    """

    name: str
    order: int = 100
    sections: Callable[[str, str], Sequence[PromptSection]] | None = None
    after_turn: Callable[[TurnDigest], Awaitable[None]] | None = None
    consolidate: Callable[[], Awaitable[Any]] | None = None
    plugin: str = ""
