"""The `memory-segmentation` switch (memory v2.5 phase B): the reflection phase reflects
every `triggerEveryTurns` turns over the last `windowTurns` pairs (and always when a turn
ends with `finish`), rendering them as numbered `### turn N` blocks after its unchanged
stable prefix. The reflection plugin asks the `memory_reflection_window` service; switched
off (the default), reflection runs after every reply on that single pair, byte-identical
to a runtime without this plugin.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, RuntimeView, ServiceSpec

CONFIG_KEY = "memorySegmentation"
SERVICE_NAME = "memory_reflection_window"


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .segmentation_config import SegmentationConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=SegmentationConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .reflection_window import ReflectionWindow

        return ReflectionWindow(runtime.config.block(CONFIG_KEY))

    return [ServiceSpec(SERVICE_NAME, build, summary="when reflection fires and over which pairs")]
