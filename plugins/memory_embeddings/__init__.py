"""The `memory-embeddings` phase: hybrid (BM25 + embedding) note recall, phase 1B.

Off by default (`memoryEmbeddings.enabled`). Switched off, the plugin registers no phase and
builds nothing: no embedding client, no vector index, no write listener, so prompts and
stores are exactly those of a runtime without it. Switched on, notes are embedded in the
background after they are stored, `### recalled` blends BM25 with cosine similarity over a
sqlite-vec index, and every embedding failure degrades that recall to BM25 with a metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl
from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .embeddings_contract import EMBEDDINGS_SERVICE

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, MemoryPhase, RuntimeView, ServiceSpec

CONFIG_KEY = "memoryEmbeddings"
SERVICE_NAME = EMBEDDINGS_SERVICE
STATUS_SERVICE_NAME = "memory_embedding_status"
PHASE_ORDER = 15  # before memory-notes (20), whose recall it feeds


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .embeddings_config import EmbeddingsConfig

    # the blend was 0.5 / 0.5 before LoCoMo measured 0.6 / 0.4 better
    return [ConfigBlock(key=CONFIG_KEY, cls=EmbeddingsConfig,
                        former_defaults={"fts5Weight": (0.5,), "vectorWeight": (0.5,)})]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    return [ServiceSpec(SERVICE_NAME, _build, close=_close,
                        summary="hybrid recall state: embedding source, sqlite-vec index, background writer"),
            ServiceSpec(STATUS_SERVICE_NAME, _build_status,
                        summary="read-only embedding status and coverage (for the hosts' memory views)")]


def _build_status(runtime: RuntimeView) -> Any:
    from .embedding_status import EmbeddingStatusView

    return EmbeddingStatusView(Path(runtime.state_dir), bool(runtime.config.block(CONFIG_KEY).enabled))


def _build(runtime: RuntimeView) -> Any:
    cfg = runtime.config.block(CONFIG_KEY)
    if not cfg.enabled:
        return None
    from .embedding_writer import EmbeddingWriter
    from .hybrid_memory import HybridMemory

    hybrid = HybridMemory(runtime, cfg)
    hybrid.writer = EmbeddingWriter(hybrid)
    return hybrid


async def _close(hybrid: Any) -> None:
    if hybrid is not None:
        await hybrid.close()


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    if not runtime.config.block(CONFIG_KEY).enabled:
        return []
    from atomic_agent.api import MemoryPhase

    from .vector_recall import VectorRecall

    hybrid = runtime.service(SERVICE_NAME)
    memory = runtime.service(MEMORY_SERVICE)
    memory.attach_vector_recall(VectorRecall(hybrid))
    memory.on_notes_stored(hybrid.writer.nudge)

    async def catch_up(*_args: Any) -> None:
        # a turn's notes were nudged as they were stored; this also retries after a failure
        await hybrid.writer.drain()

    return [MemoryPhase(name="memory-embeddings", order=PHASE_ORDER, after_turn=catch_up, consolidate=catch_up)]


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from .doctor_findings import embedding_findings

    return embedding_findings(Path(state_dir))


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .embedding_commands import add_memory_commands

    add_memory_commands(app)
