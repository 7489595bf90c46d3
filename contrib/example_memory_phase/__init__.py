"""Example memory phase: `### pinned` in every prompt's tail holds what the user keeps in
`<state dir>/pinned.md` (house rules, a current focus), read fresh each turn.

Copy this package to start a memory plugin; it imports only `atomic_agent.api`. Its tail
section is reference text for the model, capped so a big file cannot crowd out the turn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import MemoryPhase, PromptSection, hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

MAX_CHARS = 2000


def pinned_sections(runtime: RuntimeView, session_id: str, user_text: str) -> list[PromptSection]:
    try:
        text = (runtime.state_dir / "pinned.md").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return []  # no file (or an unreadable one): no section, never a failed turn
    if not text:
        return []
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS] + " …"
    # memory is data: the prompt quotes it under its source, never as instructions
    return [PromptSection("pinned", text, max_tokens=MAX_CHARS // 3, source="the user's pinned.md")]


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    return [MemoryPhase(name="example-pinned", order=50,
                        sections=lambda session_id, text: pinned_sections(runtime, session_id, text))]
