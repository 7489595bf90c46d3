"""The read path: `### profile` from the active facts, read once per step."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE  # memory.sqlite belongs to the memory plugin

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

HEADING = "profile"
PHASE_ORDER = 10  # first of the memory sections: the most stable of them


def keyword_hit(keywords: Sequence[str], user_text: str) -> bool:
    """Case-insensitive substring match of any keyword in the user message."""
    text = user_text.lower()
    return any(word and word.lower() in text for word in keywords)


def render_profile(facts: Sequence[Any], user_text: str, max_tokens: int, gate: bool,
                   count: Callable[[str], int]) -> str:
    """`- key: value` lines (pinned, then contextual facts whose keyword hit), capped at
    `max_tokens` with a `[truncated]` line. Empty when nothing qualifies."""
    lines = [f"- {f.key}: {f.value}" for f in facts if f.pinned or not gate or keyword_hit(f.keywords, user_text)]
    from atomic_agent.api import capped_lines

    return capped_lines(lines, max_tokens, count)


def profile_phase(runtime: RuntimeView, cfg: Any) -> Any:
    from atomic_agent.api import MemoryPhase, PromptSection, estimate_tokens

    def sections(session_id: str, user_text: str) -> list[Any]:
        store = runtime.service(MEMORY_SERVICE).profile_store()
        body = render_profile(store.list(), user_text, cfg.max_tokens, cfg.contextual_keyword_gate, estimate_tokens)
        if not body:
            return []
        return [PromptSection(HEADING, body, slot="memory", max_tokens=cfg.max_tokens, dedupe_key=HEADING)]

    return MemoryPhase(name="memory-profile", order=PHASE_ORDER, sections=sections)
