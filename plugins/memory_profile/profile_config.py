"""The `memoryProfile` config block."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class ProfileConfig:
    """`### profile`: on/off, its token cap, and whether contextual facts need a keyword hit."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "profile"
    phase_rank: ClassVar[int] = 10
    phase_settings: ClassVar[tuple[str, ...]] = ("outcome_votes", "max_vote", "vote_filter_threshold")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_PROFILE")
    max_tokens: int = int_field(512, 16, 32000)
    contextual_keyword_gate: bool = value_field(True)
    # votes from turn outcomes (v2 phase 7a): a turn shown a fact votes for it when it ends in
    # a reply, against it when it fails or the user's next message corrects it; scores stay
    # within ±maxVote and decay per consolidation tick (memoryLessons.signalDecay). A fact at
    # or below -voteFilterThreshold leaves ### profile, pinned or not (0: never hidden)
    outcome_votes: bool = value_field(True)
    max_vote: float = int_field(5.0, 0.5, 100.0)
    vote_filter_threshold: float = int_field(2.0, 0.0, 100.0)
