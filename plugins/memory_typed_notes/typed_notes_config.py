"""The `memoryTypedNotes` config block (the guide's memory.reflection.typedNotes.*)."""

from __future__ import annotations

import attrs

from atomic_agent.api import value_field


@attrs.frozen
class TypedNotesConfig:
    enabled: bool = value_field(False, env="ATOMIC_AGENT_MEMORY_TYPED_NOTES")
