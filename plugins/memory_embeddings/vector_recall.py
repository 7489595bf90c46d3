"""The vector side of hybrid recall: embed the user message, ask the index for the nearest notes.

`nearest` never raises: whenever the vector side cannot answer (no source, the daemon down
or slower than `queryTimeoutMs`, a bad vector, sqlite-vec missing, an empty index or one
built by another model) it counts the fallback and answers None, and that turn's recall is
BM25 alone. After a failed call the vector side rests for a while instead of making every
turn wait for the same timeout.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from atomic_agent.api import EmbeddingUnavailable

from .hybrid_memory import QUERY_LATENCY_METRIC
from .vector_codec import BadVectorError, checked_unit_vector
from .vector_index import GLOBAL_PARTITION, partition_of

RECALL_PATH = "recall"


class VectorRecall:
    def __init__(self, hybrid: Any) -> None:
        self.hybrid = hybrid
        cfg = hybrid.cfg
        self.fusion = hybrid.memory.FusionWeights(cfg.fts5_weight, cfg.vector_weight)
        self.candidates = cfg.candidates

    async def nearest(self, query: str, working_dir: str | None) -> dict[int, float] | None:
        try:
            return await self._nearest(query, working_dir)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never a failed turn: whatever broke, this turn is BM25 only
            self.hybrid.fallback(RECALL_PATH, "error", f"{type(exc).__name__}: {exc}")
            return None

    async def _nearest(self, query: str, working_dir: str | None) -> dict[int, float] | None:
        hybrid = self.hybrid
        if not hybrid.available():
            hybrid.fallback(RECALL_PATH, "resting", "a recent embedding call failed", back_off=False)
            return None
        try:
            source = hybrid.source()
        except EmbeddingUnavailable as exc:
            hybrid.fallback(RECALL_PATH, "no_source", str(exc))
            return None
        if source is None:
            hybrid.fallback(RECALL_PATH, "no_source", "no embedding provider is configured", back_off=False)
            return None
        index = hybrid.index_or_fallback(RECALL_PATH)
        if index is None:
            return None
        key = hybrid.vector_key(source.model)
        if index.model != key or not index.has_table():
            hybrid.fallback(RECALL_PATH, "index_empty", f"no vectors of {key} are indexed yet",
                            back_off=False)
            return None
        started = time.perf_counter()
        try:
            answer = await asyncio.wait_for(source.embed([query[:hybrid.cfg.max_chars]]),
                                            hybrid.cfg.query_timeout_ms / 1000)
            if not isinstance(answer, list) or len(answer) != 1 or not isinstance(answer[0], (list, tuple)):
                raise BadVectorError("the provider did not answer exactly one vector", "count")
            vector = checked_unit_vector(answer[0], index.dim)
        except asyncio.TimeoutError:
            hybrid.fallback(RECALL_PATH, "timeout", f"no query vector within {hybrid.cfg.query_timeout_ms} ms")
            return None
        except BadVectorError as exc:
            hybrid.fallback(RECALL_PATH, exc.reason, str(exc))
            return None
        except EmbeddingUnavailable as exc:
            hybrid.fallback(RECALL_PATH, "unavailable", str(exc))
            return None
        except Exception as exc:
            hybrid.fallback(RECALL_PATH, "error", f"{type(exc).__name__}: {exc}")
            return None
        partitions = None if working_dir is None else [GLOBAL_PARTITION, partition_of("workdir", working_dir)]
        try:
            found = index.nearest(vector, self.candidates, partitions)
        except Exception as exc:
            hybrid.fallback(RECALL_PATH, "sqlite_vec", f"{type(exc).__name__}: {exc}")
            return None
        hybrid.metrics.observe(QUERY_LATENCY_METRIC, (time.perf_counter() - started) * 1000)
        return found
