"""The `memory-reflection` phase: after each reply, one small LLM call extracts durable
facts (`SET`) and notes (`NOTE`) from the exchange and writes them through the same
validators as the memory tools.

The call runs on the provider's reserved reflection slot (or -1), never the session's main
slot; it is scheduled after the reply was returned and never awaited by the turn; the next
turn of the same session aborts it. Switched off (`memoryReflection.enabled = false`) the
plugin registers no phase and its service is None.

Two switches change how reflection runs, each its own config block (kept from when each was
a plugin of its own, so users' config.json still reads the same):
- `memorySegmentation` (v2.5 B): reflect every `triggerEveryTurns` turns over the last
  `windowTurns` pairs (always when a turn ends with `finish`), as numbered `### turn N`
  blocks after the unchanged stable prefix; a graceful stop reflects each session's turns
  since its last cadence point.
- `memoryTypedNotes` (v2.5 C): every NOTE carries one of four kinds (event, behavior,
  knowledge, skill) through a `[type=X] ` marker, stored as a `type:X` tag, with its own
  stable prefix and grammar.
Both off (the default), the prompt, grammar and stored notes are byte-identical to a
runtime without them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ConfigBlock, MemoryPhase, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryReflection"
SEGMENTATION_KEY = "memorySegmentation"
TYPED_NOTES_KEY = "memoryTypedNotes"
SERVICE_NAME = "memory_reflection"
PHASE_ORDER = 90  # writes only: after every read phase


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .reflection_config import ReflectionConfig
    from .segmentation_config import SegmentationConfig
    from .typed_notes_config import TypedNotesConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=ReflectionConfig),
            ConfigBlock(key=SEGMENTATION_KEY, cls=SegmentationConfig),
            ConfigBlock(key=TYPED_NOTES_KEY, cls=TypedNotesConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        cfg = runtime.config.block(CONFIG_KEY)
        if not cfg.enabled:
            return None
        from .reflection_runner import ReflectionRunner

        return ReflectionRunner(runtime, cfg)

    return [ServiceSpec(SERVICE_NAME, build, summary="the end-of-turn reflection runner (None when reflection is off)")]


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    if not runtime.config.block(CONFIG_KEY).enabled:
        return []
    from atomic_agent.api import MemoryPhase

    runner = runtime.service(SERVICE_NAME)
    return [MemoryPhase(name="memory-reflection", order=PHASE_ORDER, after_turn=runner.after_turn,
                        before_turn=runner.before_turn)]


@hookimpl
def runtime_stopping(runtime: RuntimeView) -> Awaitable[None] | None:
    """A graceful stop reflects the windows sliding-window reflection still holds (v2.5 B)."""
    if not runtime.config.block(CONFIG_KEY).enabled:
        return None
    return runtime.service(SERVICE_NAME).flush_pending()

