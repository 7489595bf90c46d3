"""The `memory-typed-notes` switch (memory v2.5 phase C): reflection tags every NOTE with
one of four kinds (event, behavior, knowledge, skill) through a `[type=X] ` marker, stored
as a `type:X` tag (no schema change; FTS indexes it). The plugin ships the typed stable
prefix and grammar; the reflection plugin asks the `memory_typed_notes` service which to
use. Switched off (the default), reflection's prompt, grammar and stored notes are
byte-identical to a runtime without this plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import attrs

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryTypedNotes"
SERVICE_NAME = "memory_typed_notes"
NOTE_TYPES = ("event", "behavior", "knowledge", "skill")


@attrs.frozen
class TypedNotes:
    """What reflection needs to switch to typed notes: its prefix template and grammar file."""

    enabled: bool
    prefix_template: str = "reflection_typed.j2"
    grammar_file: str = "reflection_typed.gbnf"
    note_types: tuple[str, ...] = NOTE_TYPES


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .typed_notes_config import TypedNotesConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=TypedNotesConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> TypedNotes:
        return TypedNotes(bool(runtime.config.block(CONFIG_KEY).enabled))

    return [ServiceSpec(SERVICE_NAME, build, summary="typed NOTE extraction for reflection (prefix and grammar)")]
