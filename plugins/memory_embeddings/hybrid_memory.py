"""The `memory_embeddings` service: one runtime's hybrid-recall state.

It resolves the embedding source and opens the vector index lazily (neither happens at
start-up, so a missing daemon or sqlite-vec never delays or fails it), and records every
degradation: a counter `agent.memory.embeddings.fallback_to_fts5{reason, path}` and the last
failure in `<state>/memory-embeddings.json`, which `doctor` and `memory embeddings` read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import EmbeddingUnavailable, store_clock, write_atomic
from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE, Memory

from .embedding_source import EmbeddingSource, resolve_embedding_source
from .sqlite_extensions import ExtensionsUnavailableError
from .vector_index import VectorIndex, vectors_path

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

FALLBACK_METRIC = "agent.memory.embeddings.fallback_to_fts5"
WRITTEN_METRIC = "agent.memory.embeddings.written"
QUERY_LATENCY_METRIC = "agent.memory.embeddings.query_latency_ms"
STATUS_FILE = "memory-embeddings.json"
CONTEXT_KEY_SUFFIX = "+context"  # vectors of a note's content and context key (memoryEmbeddings.embedContext)
RETRY_AFTER_S = 30.0  # after a failed call, recall stays BM25-only this long instead of waiting again


def status_path(state_dir: Path) -> Path:
    return Path(state_dir) / STATUS_FILE


def read_status(state_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads(status_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class HybridMemory:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.state_dir = Path(runtime.state_dir)
        self._source: EmbeddingSource | None = None
        self._source_resolved = False
        self._index: VectorIndex | None = None
        self._down_until = 0.0
        self.writer: Any = None  # the EmbeddingWriter, set by the plugin

    async def reembed(self, every_model: bool = False, on_progress: Callable[[int, int], None] | None = None) -> int:
        """Every note embedded again (embeddings_contract.HybridRecall)."""
        return int(await self.writer.reembed(every_model, on_progress))

    def vector_key(self, model: str) -> str:
        """What the stored vectors are keyed by: the model, and whether the context joined the text."""
        return model + CONTEXT_KEY_SUFFIX if self.cfg.embed_context else model

    def vector_text(self, content: str, context: str | None) -> str:
        """The text a note is embedded from, cut to maxChars."""
        text = f"{content}\n{context}" if self.cfg.embed_context and context else content
        return text[: self.cfg.max_chars]

    @property
    def memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    @property
    def metrics(self) -> Any:
        return self.memory.metrics

    def source(self) -> EmbeddingSource | None:
        if not self._source_resolved:
            try:
                self._source = resolve_embedding_source(self.runtime)
            except EmbeddingUnavailable:
                raise
            except Exception as exc:  # a misconfigured provider entry: recall stays BM25
                raise EmbeddingUnavailable(f"cannot build the embedding provider: {type(exc).__name__}: {exc}") from exc
            self._source_resolved = True
        return self._source

    def index(self) -> VectorIndex:
        """The open index (ExtensionsUnavailableError when sqlean / sqlite-vec cannot load).

        The file is derived (memory.sqlite keeps the vectors), so one that cannot be read is
        moved aside, counted, and started afresh; the writer refills it."""
        if self._index is None:
            path = vectors_path(self.state_dir)
            try:
                self._index = VectorIndex.open(path)
                self._index.check()
            except ExtensionsUnavailableError:
                raise
            except Exception as exc:
                if self._index is not None:
                    self._index.close()
                    self._index = None
                aside = path.with_name(f"{path.name}.corrupt-{store_clock.now_ms()}")
                for suffix in ("", "-wal", "-shm"):
                    part = path.with_name(path.name + suffix)
                    if part.exists():
                        part.rename(aside.with_name(aside.name + suffix))
                self.fallback("index", "index_corrupt", f"{path} could not be read ({type(exc).__name__}: {exc}); "
                              f"moved to {aside.name} and rebuilt from memory.sqlite", back_off=False)
                self._index = VectorIndex.open(path)
        return self._index

    # -- degradation -------------------------------------------------------------------------
    def available(self) -> bool:
        return time.monotonic() >= self._down_until

    def fallback(self, path: str, reason: str, detail: str, *, back_off: bool = True) -> None:
        """Count a degradation to full-text recall and remember it for doctor; never raises."""
        self.metrics.inc(FALLBACK_METRIC, reason=reason, path=path)
        if back_off:
            self._down_until = time.monotonic() + RETRY_AFTER_S
        status = read_status(self.state_dir)
        status.update({"lastFailure": {"path": path, "reason": reason, "detail": detail[:500],
                                       "at": store_clock.now_iso()},
                       "fallbacks": int(status.get("fallbacks", 0)) + 1})
        self._write_status(status)

    def succeeded(self, model: str, dim: int) -> None:
        self._down_until = 0.0
        status = read_status(self.state_dir)
        if status.get("model") != model or status.get("dim") != dim or status.get("lastFailure"):
            status.update({"model": model, "dim": dim, "lastOk": store_clock.now_iso()})
            status.pop("lastFailure", None)
            self._write_status(status)

    def _write_status(self, status: dict[str, Any]) -> None:
        try:
            write_atomic(status_path(self.state_dir), json.dumps(status, indent=2) + "\n", mode=0o600)
        except OSError:
            pass  # the status file is a courtesy for doctor; the metric was counted

    def index_or_fallback(self, path: str) -> VectorIndex | None:
        try:
            return self.index()
        except ExtensionsUnavailableError as exc:
            self.fallback(path, "sqlite_vec", str(exc))
        except Exception as exc:  # even a fresh index could not be made (disk full, permissions)
            self.fallback(path, "index", f"{type(exc).__name__}: {exc}")
        return None

    async def close(self) -> None:
        if self.writer is not None:
            await self.writer.stop()
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._source is not None:
            await self._source.close()
            self._source = None
