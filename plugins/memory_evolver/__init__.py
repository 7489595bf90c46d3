"""The `memory-evolver` phase (memory v2 phase 3): a turn may enrich the tags of notes it
surfaced, never their content.

It makes no call of its own: its EVOLVE lines ride the link generator's completion (the
`memory_links` plugin asks the `memory_evolver` service for its prompt rules and grammar
rules), so it needs `memoryLinks.enabled`. Switched off (`memoryEvolution.enabled =
false`), the service says so, the link generator's prompt and grammar are byte-identical
to a runtime without this plugin, and no tag is ever touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryEvolution"
SERVICE_NAME = "memory_evolver"


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .evolver_config import EvolverConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=EvolverConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .neighbour_evolver import NeighbourEvolver

        return NeighbourEvolver(runtime, runtime.config.block(CONFIG_KEY))

    return [ServiceSpec(SERVICE_NAME, build, summary="EVOLVE directives: tags of surfaced notes, never content")]
