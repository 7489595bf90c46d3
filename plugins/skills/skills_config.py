"""The `skills` config block."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class SkillsConfig:
    """Where skills are found, which are switched off, and the caps of viewing and running them.

    `disabled` names skills hidden from the prompt and from skill.view (their files stay);
    `roots` are extra directories searched after `<state>/skills` (a name found twice is
    taken from the first root and reported); `seedStarters` writes the starter skills once.
    """

    disabled: tuple[str, ...] = value_field(())
    roots: tuple[str, ...] = value_field(())
    seed_starters: bool = value_field(True)
    loaded_cap: int = int_field(2, 1, 16)  # skills kept under ### loaded-skills per session (LRU)
    max_body_tokens: int = int_field(600, 50, 8000)  # one loaded skill's body, before the shared budget
    script_timeout_s: int = int_field(120, 1, 3600)
    max_output_chars: int = int_field(6000, 200, 200_000)
