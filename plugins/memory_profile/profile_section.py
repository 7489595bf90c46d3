"""The read path: `### profile` from the active facts, read once per step."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE  # memory.sqlite belongs to the memory plugin

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

HEADING = "profile"
VOTING_BLOCK = "memoryLessons"  # vote curation settings (the memory_notes plugin's); defaults without it
DEFAULT_MAX_VOTE = 5.0
DEFAULT_FILTER_THRESHOLD = 2.0
PHASE_ORDER = 10  # first of the memory sections: the most stable of them


def keyword_hit(keywords: Sequence[str], user_text: str) -> bool:
    """Case-insensitive substring match of any keyword in the user message."""
    text = user_text.lower()
    return any(word and word.lower() in text for word in keywords)


def visible_facts(facts: Sequence[Any], user_text: str, gate: bool, vote_threshold: float = 0.0) -> list[Any]:
    """The facts ### profile shows: pinned ones, and contextual ones whose keyword hit (all of
    them without the gate); a fact whose vote score is at or below -`vote_threshold` is hidden
    whatever it is (a downvote overrides pinning; threshold 0 hides nothing)."""
    return [f for f in facts
            if not (vote_threshold > 0 and getattr(f, "vote_score", 0.0) <= -vote_threshold)
            and (f.pinned or not gate or keyword_hit(f.keywords, user_text))]


def fact_line(fact: Any) -> str:
    from atomic_agent.api import store_clock

    # provenance (the fact's id, who set it, since when) rides on each line; the tail quotes it as data
    return (f"- {' '.join(fact.key.split())}: {' '.join(fact.value.split())} "
            f"(#{fact.id}, {fact.source}, since {store_clock.iso_ms(fact.valid_from)[:10]})")


def render_profile(facts: Sequence[Any], user_text: str, max_tokens: int, gate: bool,
                   count: Callable[[str], int], vote_threshold: float = 0.0) -> str:
    """`- key: value` lines (pinned, then contextual facts whose keyword hit), capped at
    `max_tokens` with a `[truncated]` line. Empty when nothing qualifies."""
    from atomic_agent.api import capped_lines

    lines = [fact_line(f) for f in visible_facts(facts, user_text, gate, vote_threshold)]
    return capped_lines(lines, max_tokens, count)


def shown_fact_ids(facts: Sequence[Any], body: str) -> list[int]:
    """The ids of the facts whose line made it into the (possibly truncated) body."""
    present = set(body.splitlines())
    return [f.id for f in facts if fact_line(f) in present]


def profile_phase(runtime: RuntimeView, cfg: Any) -> Any:
    from atomic_agent.api import MemoryPhase, PromptSection, estimate_tokens

    voter: Any = None

    def voting() -> tuple[bool, float, float]:
        """(outcome votes on, max vote, filter threshold) from memoryLessons, or the defaults."""
        block = runtime.config.blocks.get(VOTING_BLOCK)
        return (bool(getattr(block, "outcome_votes", True)), float(getattr(block, "max_vote", DEFAULT_MAX_VOTE)),
                float(getattr(block, "profile_filter_threshold", DEFAULT_FILTER_THRESHOLD)))

    def votes() -> Any:
        nonlocal voter
        if voter is None:
            voter = runtime.service(MEMORY_SERVICE).outcome_voter("profile")
        return voter

    def before_turn(start: Any) -> None:
        if voting()[0]:
            votes().before_turn(start.session_id, start.turn_index)

    def sections(session_id: str, user_text: str) -> list[Any]:
        store = runtime.service(MEMORY_SERVICE).profile_store()
        facts = store.list()
        on, _max_vote, threshold = voting()
        body = render_profile(facts, user_text, cfg.max_tokens, cfg.contextual_keyword_gate, estimate_tokens,
                              threshold)
        if not body:
            return []
        if on:
            votes().shown(session_id, shown_fact_ids(facts, body))
        return [PromptSection(HEADING, body, slot="memory", max_tokens=cfg.max_tokens, dedupe_key=HEADING,
                              source="the user's profile")]

    async def after_turn(digest: Any) -> None:
        on, max_vote, _threshold = voting()
        if on:
            votes().after_turn(digest, max_vote)

    return MemoryPhase(name="memory-profile", order=PHASE_ORDER, sections=sections, before_turn=before_turn,
                       after_turn=after_turn)
