"""The `memory-rewriter` phase (memory v2.5 phase A): a referential follow-up is rewritten
into a self-contained query before recall, and `### recalled` merges the hits of both.

Only messages the heuristic gate marks referential, in sessions with history, cost a
call (the background slot, bounded by grammar, tokens and `timeoutMs`); anything that goes wrong
leaves the raw message as the query. Switched off (`memoryRewriter.enabled = false`) no
phase is registered and the service rewrites nothing: prompts are byte-identical to a
runtime without the plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryRewriter"
SERVICE_NAME = "memory_query_rewriter"
PHASE_ORDER = 10  # before the read phases: their sections use the rewrite


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .rewriter_config import RewriterConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=RewriterConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .query_rewriter import QueryRewriter

        return QueryRewriter(runtime, runtime.config.block(CONFIG_KEY))

    return [ServiceSpec(SERVICE_NAME, build, summary="rewrites of referential follow-ups for recall")]


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    cfg = runtime.config.block(CONFIG_KEY)
    if not cfg.enabled:
        return []
    from atomic_agent.api import MemoryPhase

    rewriter = runtime.service(SERVICE_NAME)
    return [MemoryPhase(name="memory-rewriter", order=PHASE_ORDER, prepare_turn=rewriter.prepare_turn)]
