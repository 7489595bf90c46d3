"""The `memoryTypedNotes` config block (the guide's memory.reflection.typedNotes.*)."""

from __future__ import annotations

from typing import ClassVar

import attrs

from atomic_agent.api import value_field


@attrs.frozen
class TypedNotesConfig:
    # how `memory phases` lists this switch (the memory plugin collects these; not config fields)
    phase_label: ClassVar[str] = "typed notes (v2.5 C)"
    phase_rank: ClassVar[int] = 90
    phase_settings: ClassVar[tuple[str, ...]] = ()

    enabled: bool = value_field(False, env="ATOMIC_AGENT_MEMORY_TYPED_NOTES")
