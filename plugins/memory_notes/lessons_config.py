"""The `memoryLessons` and `memoryProcedures` config blocks: `### lessons`, `### procedures` and
their recall tools. `memoryLessons` also holds the vote curation settings (v2 phase 7a) that
the notes and the profile phases read: one clamp, one decay, one switch for outcome votes."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class LessonsConfig:
    """`### lessons`: pointers to the live lessons whose words the user message shares."""

    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "lessons (v2 phases 5-7a)"
    phase_rank: ClassVar[int] = 22
    phase_settings: ClassVar[tuple[str, ...]] = ("recall_k", "max_entries", "model_votes", "max_vote",
                                                 "signal_decay", "deprecation_age_days", "score_blend",
                                                 "outcome_votes", "profile_filter_threshold")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_LESSONS")
    recall_k: int = int_field(3, 1, 20)
    max_tokens: int = int_field(200, 16, 32000)
    max_entries: int = int_field(200, 1, 100_000)  # live lessons kept; past it the weakest is deprecated
    # vote curation (v2 phase 7a): after a turn shown lessons, the reflection model votes on
    # them (one grammar-constrained call); scores stay within ±maxVote and decay by
    # signalDecay once per consolidation tick; a lesson that never helped retires when its
    # score turns negative or after deprecationAgeDays
    model_votes: bool = value_field(True)
    max_vote: float = int_field(5.0, 0.5, 100.0)
    signal_decay: float = int_field(0.95, 0.01, 1.0)
    deprecation_age_days: int = int_field(30, 1, 3650)
    # recall reranks by relevance + scoreBlend × vote score + (1 - scoreBlend) × (helped - hurt)
    score_blend: float = int_field(0.4, 0.0, 1.0)
    # the same curation for the notes under ### recalled and the facts under ### profile
    # (outcomeVotes): a turn votes for what it was shown when it ends in a reply, against it
    # when it fails or the next message corrects it; same clamp (maxVote) and decay. A fact at
    # or below -profileFilterThreshold leaves ### profile, pinned or not (0: never hidden);
    # past memoryNotes.maxEntries the lowest-scored note is evicted first
    outcome_votes: bool = value_field(True)
    profile_filter_threshold: float = int_field(2.0, 0.0, 100.0)


@attrs.frozen
class ProceduresConfig:
    """`### procedures`: pointers to advisory templates mined from successful multi-step turns."""

    phase_label: ClassVar[str] = "procedures (v2 phase 7b)"
    phase_rank: ClassVar[int] = 24
    phase_settings: ClassVar[tuple[str, ...]] = ("min_runs", "recall_k")

    enabled: bool = value_field(True, env="ATOMIC_AGENT_MEMORY_PROCEDURES")
    recall_k: int = int_field(2, 1, 10)
    max_tokens: int = int_field(150, 16, 32000)
    min_runs: int = int_field(2, 2, 100)  # alike successful turns before a sequence becomes a template
