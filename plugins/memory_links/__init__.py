"""The `memory-links` phase (memory v2 phase 2): a typed link graph between notes.

Read side: the notes phase asks the `memory_links` service to expand its base recall hits
by a bounded BFS over the graph and shows the linked notes after them. Write side: after a
turn, the link generator (one small completion on the background slot, never the session's
main slot) proposes edges among the notes that turn surfaced; only edges whose two ends
were surfaced are kept. Switched off (`memoryLinks.enabled = false`) the service expands
nothing and no phase is registered: prompts and memory.sqlite are byte-identical to a
runtime without the plugin.

The neighbour evolver (v2 phase 3, its own block `memoryEvolution`, kept from when it was a
plugin of its own) lets a turn enrich the tags of notes it surfaced, never their content:
its EVOLVE lines ride the link generator's completion, so it needs `memoryLinks.enabled`.
Switched off, the generator's prompt and grammar carry no EVOLVE rules and no tag is touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryLinks"
EVOLUTION_KEY = "memoryEvolution"
CONSOLIDATION_KEY = "memoryConsolidation"
LESSONS_KEY = "memoryLessons"  # the memory_notes plugin's block: no lessons, no consolidator
SERVICE_NAME = "memory_links"
PHASE_ORDER = 91  # after reflection (90): the generator reads what the turn surfaced


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .consolidation_config import ConsolidationConfig
    from .evolver_config import EvolverConfig
    from .links_config import LinksConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=LinksConfig), ConfigBlock(key=EVOLUTION_KEY, cls=EvolverConfig),
            ConfigBlock(key=CONSOLIDATION_KEY, cls=ConsolidationConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .link_service import LinkService

        return LinkService(runtime, runtime.config.block(CONFIG_KEY))

    return [ServiceSpec(SERVICE_NAME, build, summary="link-graph expansion of recall and surfaced note ids")]


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    cfg = runtime.config.block(CONFIG_KEY)
    if not cfg.enabled:
        return []
    from atomic_agent.api import MemoryPhase

    from .link_generator import LinkGenerator

    generator = LinkGenerator(runtime, cfg, runtime.service(SERVICE_NAME))
    phases = [MemoryPhase(name="memory-links", order=PHASE_ORDER, after_turn=generator.after_turn,
                          before_turn=generator.before_turn)]
    consolidation = runtime.config.block(CONSOLIDATION_KEY)
    lessons = runtime.config.blocks.get(LESSONS_KEY)  # the memory_notes plugin's block, when installed
    if consolidation.enabled and lessons is not None and lessons.enabled:
        from .lesson_consolidator import LessonConsolidator

        consolidator = LessonConsolidator(runtime, consolidation, lessons)
        phases.append(MemoryPhase(name="memory-consolidation", order=PHASE_ORDER + 1,
                                  consolidate=consolidator.consolidate))
    return phases
