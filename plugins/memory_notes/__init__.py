"""The `memory-notes` phase: freeform notes with full-text recall.

`### recalled` shows the top BM25 hits for the user message and `### memory-index` compact
pointers to recent notes (never the ones already recalled); both are prefetched once per
turn and kept only in memory, never in the session record. The corpus itself is never
put into a prompt: full bodies need `memory.notes.recall {id}`. Switched off
(`memoryNotes.enabled = false`) the plugin registers nothing and never opens the database.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ToolSpec

CONFIG_KEY = "memoryNotes"
LESSONS_KEY = "memoryLessons"  # lessons and procedures ride on the notes phase: off with it
PROCEDURES_KEY = "memoryProcedures"


def _config(runtime: RuntimeView) -> Any:
    return runtime.config.block(CONFIG_KEY)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .lessons_config import LessonsConfig, ProceduresConfig
    from .notes_config import NotesConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=NotesConfig), ConfigBlock(key=LESSONS_KEY, cls=LessonsConfig),
            ConfigBlock(key=PROCEDURES_KEY, cls=ProceduresConfig)]


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    cfg = _config(runtime)
    if not cfg.enabled:
        return []
    from .notes_tools import notes_tool_specs

    specs = notes_tool_specs(runtime, cfg)
    lessons = runtime.config.block(LESSONS_KEY)
    if lessons.enabled:
        from .lessons_section import lessons_tool_specs

        specs += lessons_tool_specs(runtime, lessons)
    procedures = runtime.config.block(PROCEDURES_KEY)
    if procedures.enabled:
        from .procedures_section import procedures_tool_specs

        specs += procedures_tool_specs(runtime, procedures)
    return specs


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    cfg = _config(runtime)
    if not cfg.enabled:
        return []
    from .notes_sections import notes_phase

    phases = [notes_phase(runtime, cfg)]
    lessons = runtime.config.block(LESSONS_KEY)
    if lessons.enabled:
        from .lessons_section import lessons_phase

        phases.append(lessons_phase(runtime, lessons))
    procedures = runtime.config.block(PROCEDURES_KEY)
    if procedures.enabled:
        from .procedures_section import procedures_phase

        phases.append(procedures_phase(runtime, procedures))
    return phases
