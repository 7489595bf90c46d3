"""The `memory-reflection` phase: after each reply, one small LLM call extracts durable
facts (`SET`) and notes (`NOTE`) from the exchange and writes them through the same
validators as the memory tools.

The call runs on the provider's reserved reflection slot (or -1), never the session's main
slot; it is scheduled after the reply was returned and never awaited by the turn; the next
turn of the same session aborts it. Switched off (`memoryReflection.enabled = false`) the
plugin registers nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from atomic_agent.api import hookimpl

CONFIG_KEY = "memoryReflection"
PHASE_ORDER = 90  # writes only: after every read phase


@hookimpl
def register_config_blocks() -> Iterable[Any]:
    from atomic_agent.api import ConfigBlock

    from .reflection_config import ReflectionConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=ReflectionConfig)]


@hookimpl
def register_memory_phases(runtime: Any) -> Iterable[Any]:
    cfg = runtime.config.block(CONFIG_KEY)
    if not cfg.enabled:
        return []
    from atomic_agent.api import MemoryPhase

    from .reflection_runner import ReflectionRunner

    runner = ReflectionRunner(runtime, cfg)
    return [MemoryPhase(name="memory-reflection", order=PHASE_ORDER, after_turn=runner.after_turn,
                        before_turn=runner.before_turn)]

